"""Apache Hudi table maintenance outside the JVM."""
