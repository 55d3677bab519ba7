import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;

/**
 * Takes a ZooKeeper lock with Curator's InterProcessMutex, as Hudi's ZookeeperBasedLockProvider does.
 * Usage: HoldLock CONNECT PATH SECONDS [hold|try]
 * hold: wait up to 60 s for the lock, print ACQUIRED, hold it SECONDS, release, print RELEASED.
 * try: acquire(SECONDS), print ACQUIRED or NOT_ACQUIRED, release.
 * A short session, so that the node of a killed holder goes within seconds.
 */
public class HoldLock {
  public static void main(String[] args) throws Exception {
    String mode = args.length > 3 ? args[3] : "hold";
    long seconds = Long.parseLong(args[2]);
    try (CuratorFramework client = CuratorFrameworkFactory.builder().connectString(args[0])
        .retryPolicy(new BoundedExponentialBackoffRetry(1000, 16000, 3))
        .sessionTimeoutMs(5000).connectionTimeoutMs(15000).build()) {
      client.start();
      InterProcessMutex mutex = new InterProcessMutex(client, args[1]);
      boolean acquired = mutex.acquire(mode.equals("try") ? seconds : 60, TimeUnit.SECONDS);
      System.out.println(acquired ? "ACQUIRED" : "NOT_ACQUIRED");
      System.out.flush();
      if (!acquired) {
        return;
      }
      if (mode.equals("hold")) {
        Thread.sleep(seconds * 1000);
      }
      mutex.release();
      System.out.println("RELEASED");
      System.out.flush();
    }
  }
}
