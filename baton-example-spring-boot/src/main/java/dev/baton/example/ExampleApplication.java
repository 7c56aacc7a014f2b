package dev.baton.example;

import dev.baton.election.Term;
import dev.baton.spring.boot.WhileLeader;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Start it twice (two terminals, {@code PORT=8081} on the second): one instance logs "leading"
 * every two seconds, the other waits; stop the leader and the other takes over.
 */
@SpringBootApplication
public class ExampleApplication {

  private static final Logger log = LoggerFactory.getLogger(ExampleApplication.class);

  public static void main(String[] args) {
    SpringApplication.run(ExampleApplication.class, args);
  }

  /**
   * Runs only while this instance leads: called on a thread of its own with each term, interrupted
   * when the term ends; the lease is released only once it has returned.
   */
  @WhileLeader
  void reportWhileLeading(Term term) {
    try {
      while (term.isValid()) {
        log.info("leading '{}' with fencing token {}", term.election(), term.token());
        TimeUnit.SECONDS.sleep(2);
      }
    } catch (InterruptedException e) {
      // The term ended: the interrupt is how it is told.
    } finally {
      log.info("stopped leading '{}' (token {})", term.election(), term.token());
    }
  }
}
