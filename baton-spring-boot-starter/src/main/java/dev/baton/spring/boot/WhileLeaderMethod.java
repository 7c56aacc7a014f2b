package dev.baton.spring.boot;

import dev.baton.election.Elector;
import dev.baton.election.FencingToken;
import dev.baton.election.Term;
import dev.baton.election.TermWork;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.BeanFactory;

/**
 * One {@link WhileLeader} method of one bean, as the {@link TermWork} of the elector it is bound
 * to. Its signature is checked when it is found, so a bad one fails the context at start.
 */
final class WhileLeaderMethod implements TermWork {

  private static final Logger log = LoggerFactory.getLogger(WhileLeaderMethod.class);

  /**
   * How often a method that does not return after its term ended is reported while the end waits.
   */
  private static final Duration STILL_RUNNING_REPORT = Duration.ofSeconds(10);

  final String beanName;
  final String electorAttribute;
  final String description;
  private final Object bean;
  private final Method method;
  private final List<Function<Term, ?>> arguments;
  private final boolean runsForTheTerm;
  private final BeanFactory beans;
  private volatile String elector;

  private WhileLeaderMethod(
      String beanName,
      Object bean,
      Method method,
      String electorAttribute,
      String description,
      List<Function<Term, ?>> arguments,
      boolean runsForTheTerm,
      BeanFactory beans) {
    this.beanName = beanName;
    this.bean = bean;
    this.method = method;
    this.electorAttribute = electorAttribute;
    this.description = description;
    this.arguments = arguments;
    this.runsForTheTerm = runsForTheTerm;
    this.beans = beans;
  }

  /**
   * Checks the signature of {@code declared} (found on the bean's class) and returns it ready to
   * run as {@code invocable} (the same method as the bean, a proxy perhaps, exposes it).
   */
  static WhileLeaderMethod of(
      String beanName,
      Object bean,
      Method declared,
      Method invocable,
      String electorAttribute,
      BeanFactory beans) {
    String description =
        "@WhileLeader method "
            + declared.getDeclaringClass().getName()
            + "."
            + declared.getName()
            + "("
            + Arrays.stream(declared.getParameterTypes())
                .map(Class::getSimpleName)
                .collect(Collectors.joining(", "))
            + ") of bean '"
            + beanName
            + "'";
    Class<?>[] types = declared.getParameterTypes();
    List<Function<Term, ?>> arguments = new ArrayList<>();
    for (Class<?> type : types) {
      if (type == Term.class) {
        arguments.add(term -> term);
      } else if (type == FencingToken.class) {
        arguments.add(Term::token);
      } else {
        throw new InvalidWhileLeaderMethodException(
            description + " takes a " + type.getName(),
            "Take only a dev.baton.election.Term, a dev.baton.election.FencingToken, both or nothing.");
      }
    }
    Class<?> returned = declared.getReturnType();
    boolean runsForTheTerm = returned == void.class;
    if (!runsForTheTerm && !AutoCloseable.class.isAssignableFrom(returned)) {
      throw new InvalidWhileLeaderMethodException(
          description + " returns " + returned.getName(),
          "Return void to run for the term on a thread of its own (interrupted when the term ends), or an"
              + " AutoCloseable that stops the work the method started.");
    }
    if (Modifier.isStatic(declared.getModifiers())) {
      throw new InvalidWhileLeaderMethodException(
          description + " is static", "Annotate an instance method: the work belongs to the bean.");
    }
    // The application's own method, which may be package-private, as Spring's @Scheduled does.
    invocable.trySetAccessible();
    return new WhileLeaderMethod(
        beanName, bean, invocable, electorAttribute, description, arguments, runsForTheTerm, beans);
  }

  /**
   * The bean name of the elector whose terms run this method; null until the context has started.
   */
  String elector() {
    return elector;
  }

  void bindTo(String electorBeanName) {
    this.elector = electorBeanName;
  }

  @Override
  public AutoCloseable start(Term term) throws Exception {
    if (!runsForTheTerm) {
      AutoCloseable stop = (AutoCloseable) invoke(term);
      if (stop == null) {
        throw new IllegalStateException(
            description
                + " returned null for the term with token "
                + term.token()
                + "; return what stops the work (a lambda will do), or make the method void");
      }
      return stop;
    }
    Thread thread =
        new Thread(
            () -> runForTheTerm(term),
            "baton-" + beanName + "." + method.getName() + "-" + term.token().value());
    // Daemon: a method that ignores its interrupt must not keep the JVM alive once the context is
    // gone.
    thread.setDaemon(true);
    thread.start();
    return () -> stop(thread, term);
  }

  private Object invoke(Term term) throws Exception {
    Object[] args = new Object[arguments.size()];
    for (int i = 0; i < args.length; i++) {
      args[i] = arguments.get(i).apply(term);
    }
    try {
      return method.invoke(bean, args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      if (e.getCause() instanceof Error cause) {
        throw cause;
      }
      throw e;
    }
  }

  private void runForTheTerm(Term term) {
    try {
      invoke(term);
      log.debug(
          "election '{}' candidate '{}': {} returned; the term with token {} goes on",
          term.election(),
          term.candidate(),
          description,
          term.token());
    } catch (Exception | Error e) {
      if (term.isEnded()) {
        if (e instanceof InterruptedException) {
          log.debug(
              "election '{}' candidate '{}': {} ended by its interrupt",
              term.election(),
              term.candidate(),
              description);
        } else {
          log.warn(
              "election '{}' candidate '{}': {} threw after the term with token {} ended",
              term.election(),
              term.candidate(),
              description,
              term.token(),
              e);
        }
        return;
      }
      log.error(
          "election '{}' candidate '{}': {} failed during the term with token {}; stepping down so another"
              + " candidate can lead",
          term.election(),
          term.candidate(),
          description,
          term.token(),
          e);
      beans.getBean(elector, Elector.class).workFailed(term);
    }
  }

  /**
   * Interrupts the method and waits for it to return: the term's end, and so its release, waits
   * too.
   */
  private void stop(Thread thread, Term term) {
    thread.interrupt();
    long waitedMillis = 0;
    while (true) {
      try {
        thread.join(STILL_RUNNING_REPORT.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        log.warn(
            "election '{}' candidate '{}': interrupted while waiting for {} to return; the term with token {}"
                + " ends without it",
            term.election(),
            term.candidate(),
            description,
            term.token());
        return;
      }
      if (!thread.isAlive()) {
        return;
      }
      waitedMillis += STILL_RUNNING_REPORT.toMillis();
      log.warn(
          "election '{}' candidate '{}': {} still runs {} s after it was interrupted at the end of the term with"
              + " token {}; the end of the term, and any release, waits until it returns",
          term.election(),
          term.candidate(),
          description,
          waitedMillis / 1000,
          term.token());
    }
  }

  @Override
  public String toString() {
    return description;
  }
}
