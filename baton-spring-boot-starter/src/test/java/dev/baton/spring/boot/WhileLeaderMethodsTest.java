package dev.baton.spring.boot;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.baton.election.Elector;
import dev.baton.election.FencingToken;
import dev.baton.election.LeaseStore;
import dev.baton.election.MemoryLeaseStore;
import dev.baton.election.Term;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.context.annotation.Scope;

/**
 * {@link WhileLeader} methods on the in-memory store: which elector runs them, what a method that
 * throws does, and the context that fails at start, naming the bean and the method, when one cannot
 * run. Leading on PostgreSQL with two instances is in {@link TwoInstancesIT}.
 */
class WhileLeaderMethodsTest {

  static final String[] MEMORY = {"election.backend=memory", "election.retry-period=200ms"};

  static ConfigurableApplicationContext start(Class<?> app, String... properties) {
    return new SpringApplicationBuilder(app)
        .web(WebApplicationType.NONE)
        .properties(MEMORY)
        .properties(properties)
        .run();
  }

  static InvalidWhileLeaderMethodException failure(Class<?> app) {
    return failure(() -> start(app, "election.name=bad-" + System.nanoTime()));
  }

  /**
   * A plain Spring context, without Boot: with several electors and no @Primary one, the Actuator
   * contributions (which describe one elector) would fail a Boot context before the methods are
   * checked.
   */
  static InvalidWhileLeaderMethodException plainFailure(Class<?> config) {
    return failure(() -> new AnnotationConfigApplicationContext(config));
  }

  static InvalidWhileLeaderMethodException failure(
      Supplier<ConfigurableApplicationContext> context) {
    Throwable e;
    try {
      context.get().close();
      throw new AssertionError("the context started");
    } catch (RuntimeException thrown) {
      e = thrown;
    }
    Throwable t = e;
    while (t != null && !(t instanceof InvalidWhileLeaderMethodException)) {
      t = t.getCause();
    }
    assertThat(t).as("an InvalidWhileLeaderMethodException in the causes of %s", e).isNotNull();
    return (InvalidWhileLeaderMethodException) t;
  }

  /** What a method saw: the terms it ran for and the tokens it was given. */
  static final class Calls {
    final List<Term> terms = new CopyOnWriteArrayList<>();
    final List<FencingToken> tokens = new CopyOnWriteArrayList<>();
    final List<Term> stopped = new CopyOnWriteArrayList<>();
  }

  @SpringBootConfiguration
  @ImportAutoConfiguration(BatonAutoConfiguration.class)
  static class Base {}

  // ------------------------------------------------------------------ the auto-configured elector

  static class Reporting {
    final Calls calls = new Calls();

    /** Starts work and returns what stops it. */
    @WhileLeader
    AutoCloseable report(Term term, FencingToken token) {
      calls.terms.add(term);
      calls.tokens.add(token);
      return () -> calls.stopped.add(term);
    }
  }

  @Import(Base.class)
  static class ReportingApp {
    @Bean
    Reporting reporting() {
      return new Reporting();
    }
  }

  @Test
  @DisplayName(
      "a method returning AutoCloseable runs in the auto-configured elector's term, closed with the context")
  void autoConfiguredElector() {
    ConfigurableApplicationContext c =
        start(ReportingApp.class, "election.name=report-" + System.nanoTime());
    Calls calls = c.getBean(Reporting.class).calls;
    try {
      await().atMost(20, SECONDS).until(() -> calls.terms.size() == 1);
      Term term = calls.terms.get(0);
      assertThat(term.election()).isEqualTo(c.getBean(Elector.class).election());
      assertThat(calls.tokens).containsExactly(term.token());
      assertThat(calls.stopped).isEmpty();
    } finally {
      c.close();
    }
    assertThat(calls.stopped)
        .as("closed before the context finished closing")
        .containsExactly(calls.terms.get(0));
  }

  // ------------------------------------------------------------------ several electors

  static class TwoJobs {
    final Calls billing = new Calls();
    final Calls reports = new Calls();

    /** Runs for the term: returns only when interrupted. */
    @WhileLeader(elector = "billingElector")
    void bill(Term term) throws InterruptedException {
      billing.terms.add(term);
      try {
        new java.util.concurrent.CountDownLatch(1).await();
      } finally {
        billing.stopped.add(term);
      }
    }

    /** No elector named: the @Primary one. */
    @WhileLeader
    void report(FencingToken token) {
      reports.tokens.add(token);
    }
  }

  @Import(Base.class)
  static class TwoElectorsApp {
    @Bean
    LeaseStore store() {
      return new MemoryLeaseStore();
    }

    @Bean
    Elector billingElector(LeaseStore store, WhileLeaderMethods methods) {
      return Elector.builder(store)
          .election("billing")
          .closeOnShutdown(false)
          .whileLeader(methods.forElector("billingElector"))
          .build();
    }

    @Bean
    @Primary
    Elector reportsElector(LeaseStore store, WhileLeaderMethods methods) {
      return Elector.builder(store)
          .election("reports")
          .closeOnShutdown(false)
          .whileLeader(methods.forElector("reportsElector"))
          .build();
    }

    @Bean
    TwoJobs jobs() {
      return new TwoJobs();
    }
  }

  @Test
  @DisplayName(
      "with several electors, each method runs in the terms of the one it names, or of the @Primary one")
  void severalElectors() {
    ConfigurableApplicationContext c = start(TwoElectorsApp.class);
    TwoJobs jobs = c.getBean(TwoJobs.class);
    try {
      await()
          .atMost(20, SECONDS)
          .until(() -> jobs.billing.terms.size() == 1 && jobs.reports.tokens.size() == 1);
      assertThat(jobs.billing.terms.get(0).election()).isEqualTo("billing");
      assertThat(c.getBean("reportsElector", Elector.class).currentTerm().orElseThrow().token())
          .isEqualTo(jobs.reports.tokens.get(0));
      assertThat(jobs.billing.stopped).isEmpty();
    } finally {
      c.close();
    }
    assertThat(jobs.billing.stopped)
        .as("interrupted, and returned before the context finished closing")
        .containsExactly(jobs.billing.terms.get(0));
  }

  // ------------------------------------------------------------------ a method that fails

  static class FailsOnce {
    final Calls calls = new Calls();

    @WhileLeader
    void work(Term term) throws InterruptedException {
      calls.terms.add(term);
      if (calls.terms.size() == 1) {
        throw new IllegalStateException("the first term's work fails");
      }
      new java.util.concurrent.CountDownLatch(1).await();
    }
  }

  @Import(Base.class)
  static class FailsOnceApp {
    @Bean
    FailsOnce failsOnce() {
      return new FailsOnce();
    }
  }

  @Test
  @DisplayName(
      "a method that throws during its term steps down; the next term runs it again with a newer token")
  void failureStepsDown() {
    ConfigurableApplicationContext c =
        start(FailsOnceApp.class, "election.name=fails-" + System.nanoTime());
    try {
      Calls calls = c.getBean(FailsOnce.class).calls;
      await().atMost(20, SECONDS).until(() -> calls.terms.size() == 2);
      assertThat(calls.terms.get(0).isEnded()).isTrue();
      assertThat(calls.terms.get(1).token().isNewerThan(calls.terms.get(0).token())).isTrue();
    } finally {
      c.close();
    }
  }

  // ------------------------------------------------------------------ methods that cannot run

  static class TakesString {
    @WhileLeader
    void work(String what) {}
  }

  @Import(Base.class)
  static class TakesStringApp {
    @Bean
    TakesString badWork() {
      return new TakesString();
    }
  }

  @Test
  @DisplayName(
      "a parameter other than Term or FencingToken fails the context, naming bean, method and rule")
  void badParameter() {
    InvalidWhileLeaderMethodException e = failure(TakesStringApp.class);
    assertThat(e)
        .hasMessageContaining(
            "@WhileLeader method "
                + TakesString.class.getName()
                + ".work(String) of bean 'badWork'")
        .hasMessageContaining("takes a java.lang.String")
        .hasMessageContaining("Term")
        .hasMessageContaining("FencingToken");
    FailureAnalysis analysis = new WhileLeaderMethodFailureAnalyzer().analyze(e);
    assertThat(analysis.getDescription())
        .contains("'badWork'")
        .contains("work(String)")
        .doesNotContain("Take only");
    assertThat(analysis.getAction()).startsWith("Take only a dev.baton.election.Term");
  }

  static class ReturnsString {
    @WhileLeader
    String work(Term term) {
      return "done";
    }
  }

  @Import(Base.class)
  static class ReturnsStringApp {
    @Bean
    ReturnsString badReturn() {
      return new ReturnsString();
    }
  }

  @Test
  @DisplayName(
      "a return type other than void or AutoCloseable fails the context, saying what each means")
  void badReturnType() {
    InvalidWhileLeaderMethodException e = failure(ReturnsStringApp.class);
    assertThat(e)
        .hasMessageContaining(ReturnsString.class.getName() + ".work(Term) of bean 'badReturn'")
        .hasMessageContaining("returns java.lang.String")
        .hasMessageContaining("Return void")
        .hasMessageContaining("AutoCloseable");
  }

  @Import(Base.class)
  static class PrototypeApp {
    @Bean
    @Scope("prototype")
    Reporting prototypeWork() {
      return new Reporting();
    }

    @Bean
    Object user(Reporting prototypeWork) {
      return prototypeWork;
    }
  }

  @Test
  @DisplayName("a method on a bean that is not a singleton fails the context")
  void notSingleton() {
    InvalidWhileLeaderMethodException e = failure(PrototypeApp.class);
    assertThat(e)
        .hasMessageContaining("of bean 'prototypeWork'")
        .hasMessageContaining("scope 'prototype'");
  }

  static class NamesUnknownElector {
    @WhileLeader(elector = "nosuchElector")
    void work() {}
  }

  @Import(Base.class)
  static class UnknownElectorApp {
    @Bean
    NamesUnknownElector unknown() {
      return new NamesUnknownElector();
    }
  }

  @Test
  @DisplayName(
      "an elector name that is no Elector bean fails the context and lists the ones there are")
  void unknownElector() {
    InvalidWhileLeaderMethodException e = failure(UnknownElectorApp.class);
    assertThat(e)
        .hasMessageContaining("of bean 'unknown'")
        .hasMessageContaining("'nosuchElector'")
        .hasMessageContaining("[batonElector]");
  }

  static class NamesNone {
    @WhileLeader
    void work() {}
  }

  @Configuration(proxyBeanMethods = false)
  static class AmbiguousApp {
    @Bean
    static WhileLeaderMethods whileLeaderMethods() {
      return new WhileLeaderMethods();
    }

    @Bean
    LeaseStore store() {
      return new MemoryLeaseStore();
    }

    @Bean
    Elector one(LeaseStore store, WhileLeaderMethods methods) {
      return Elector.builder(store)
          .election("one")
          .closeOnShutdown(false)
          .whileLeader(methods.forElector("one"))
          .build();
    }

    @Bean
    Elector two(LeaseStore store) {
      return Elector.builder(store).election("two").closeOnShutdown(false).build();
    }

    @Bean
    NamesNone namesNone() {
      return new NamesNone();
    }

    @Bean
    NamesUnservedElector namesTwo() {
      return new NamesUnservedElector();
    }
  }

  static class NamesUnservedElector {
    @WhileLeader(elector = "two")
    void work() {}
  }

  @Test
  @DisplayName(
      "several electors, no @Primary and no elector named fails the context and lists the electors")
  void ambiguousElector() {
    InvalidWhileLeaderMethodException e = plainFailure(AmbiguousApp.class);
    assertThat(e)
        .hasMessageContaining("of bean 'namesNone'")
        .hasMessageContaining("[one, two]")
        .hasMessageContaining("@WhileLeader(elector = ...)");
  }

  @Configuration(proxyBeanMethods = false)
  @Import(AmbiguousApp.class)
  static class UnservedApp {
    @Bean
    @Primary
    Elector three(LeaseStore store, WhileLeaderMethods methods) {
      return Elector.builder(store)
          .election("three")
          .closeOnShutdown(false)
          .whileLeader(methods.forElector("three"))
          .build();
    }
  }

  @Test
  @DisplayName(
      "an elector built without the annotated methods fails the context and says how to build it")
  void electorWithoutMethods() {
    InvalidWhileLeaderMethodException e = plainFailure(UnservedApp.class);
    assertThat(e)
        .hasMessageContaining("of bean 'namesTwo'")
        .hasMessageContaining("'two'")
        .hasMessageContaining(".whileLeader(whileLeaderMethods.forElector(\"two\"))");
  }
}
