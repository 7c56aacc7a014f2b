package dev.baton.example;

import dev.baton.election.TermWork;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * Start it twice (two terminals, {@code --server.port=8081} on the second): one instance logs
 * "leading" every two seconds, the other waits; stop the leader and the other takes over.
 */
@SpringBootApplication
public class ExampleApplication {

  private static final Logger log = LoggerFactory.getLogger(ExampleApplication.class);

  public static void main(String[] args) {
    SpringApplication.run(ExampleApplication.class, args);
  }

  /** One thread for the application's timed work; shut down with the context. */
  @Bean(destroyMethod = "shutdownNow")
  ScheduledExecutorService ticks() {
    return Executors.newSingleThreadScheduledExecutor();
  }

  /** Runs only while this instance leads: started with each term, stopped when it ends. */
  @Bean
  TermWork reportWhileLeading(ScheduledExecutorService ticks) {
    return term -> {
      ScheduledFuture<?> job =
          ticks.scheduleAtFixedRate(
              () -> {
                if (term.isValid()) {
                  log.info("leading '{}' with fencing token {}", term.election(), term.token());
                }
              },
              0, 2, TimeUnit.SECONDS);
      return () -> {
        job.cancel(false);
        log.info("stopped leading '{}' (token {})", term.election(), term.token());
      };
    };
  }
}
