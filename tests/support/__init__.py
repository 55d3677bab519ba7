"""Support code of the tests (builders, reference data, servers, fault-injection scripts): no tests here."""
