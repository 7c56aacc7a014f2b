package dev.baton.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method of a singleton bean while this instance leads: called with each term
 * the elector is granted, stopped when that term ends, called afresh with the next one. The
 * annotation form of a {@code TermWork} bean, and built on the same {@code whileLeader}.
 *
 * <p>The method may take a {@code Term}, a {@code FencingToken}, both or nothing. What it returns
 * says which kind of work it is:
 *
 * <ul>
 *   <li>{@code void}: the method is the work. It is called on a thread of its own for each term and
 *       may run as long as the term does (loop while {@code term.isValid()}, block on a queue,
 *       ...). When the term ends the thread is interrupted, and the term's end waits until the
 *       method has returned: the lease is not released, nor the method called for this instance's
 *       next term, before that. A method that returns early has done its work for this term; the
 *       term goes on.
 *   <li>an {@code AutoCloseable} (a lambda will do): the method starts the work (threads, a
 *       consumer, a schedule) and returns what stops it, as {@code TermWork.start} does. It is
 *       called on the elector's callback thread and must return quickly; what it returns is closed
 *       when the term ends, before the lease is released.
 * </ul>
 *
 * <p>A method that throws gives the term up: this instance steps down so another can lead, and
 * campaigns again (a {@code void} method that throws once its term has ended, as an interrupted one
 * may, is only logged). Any other parameter or return type, a method on a bean that is not a
 * singleton, or an {@link #elector()} that does not name an elector running annotated methods,
 * fails the context at start with a message naming the bean and the method.
 *
 * <p>A lease can still run out under a method that does not return when interrupted (the store or
 * the network failed and the renew deadline passed): pass the term's fencing token with every write
 * the work makes, so a store that checks it refuses the late ones.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface WhileLeader {

  /**
   * The bean name of the {@code Elector} whose terms run the method. Empty (the default): the only
   * elector, or the {@code @Primary} one when the application declares several. An elector the
   * application declares itself runs annotated methods when it is built with {@code
   * .whileLeader(whileLeaderMethods.forElector("itsBeanName"))}; the auto-configured one does so by
   * itself.
   */
  String elector() default "";
}
