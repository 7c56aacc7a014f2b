package dev.baton.spring.boot;

import static java.util.Objects.requireNonNull;

import dev.baton.election.Elector;
import dev.baton.election.TermWork;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Finds the {@link WhileLeader} methods of the context's beans and runs each in the terms of the
 * elector it names. The auto-configured elector runs its methods by itself; an {@code Elector} the
 * application declares runs them when built with {@code
 * .whileLeader(methods.forElector("itsBeanName"))}.
 *
 * <p>Signatures are checked as each bean is created, and every method's elector once all singletons
 * exist, so a method that could not run fails the context before any elector starts.
 */
public final class WhileLeaderMethods
    implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware {

  private final List<WhileLeaderMethod> methods = new CopyOnWriteArrayList<>();
  private final Set<String> servedElectors = ConcurrentHashMap.newKeySet();
  private final Set<Class<?>> withoutMethods = ConcurrentHashMap.newKeySet();
  private ConfigurableListableBeanFactory beans;

  WhileLeaderMethods() {}

  /**
   * The work of the {@link WhileLeader} methods bound to the elector named {@code electorBeanName},
   * for its builder's {@code whileLeader}: each started with the term, stopped in reverse order
   * when it ends. Methods are looked up when a term starts.
   */
  public TermWork forElector(String electorBeanName) {
    requireNonNull(electorBeanName, "electorBeanName");
    servedElectors.add(electorBeanName);
    return term -> LeaderBeans.startAll(boundTo(electorBeanName), term);
  }

  private List<WhileLeaderMethod> boundTo(String electorBeanName) {
    return methods.stream().filter(m -> electorBeanName.equals(m.elector())).toList();
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    if (!(beanFactory instanceof ConfigurableListableBeanFactory listable)) {
      throw new IllegalStateException(
          "@WhileLeader methods need a ConfigurableListableBeanFactory, not " + beanFactory);
    }
    this.beans = listable;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
    Class<?> type = AopUtils.getTargetClass(bean);
    if (withoutMethods.contains(type)
        || !AnnotationUtils.isCandidateClass(type, WhileLeader.class)) {
      return bean;
    }
    Map<Method, WhileLeader> found =
        MethodIntrospector.selectMethods(
            type,
            (MethodIntrospector.MetadataLookup<WhileLeader>)
                m -> AnnotatedElementUtils.findMergedAnnotation(m, WhileLeader.class));
    if (found.isEmpty()) {
      withoutMethods.add(type);
      return bean;
    }
    found.forEach(
        (method, annotation) -> {
          Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
          WhileLeaderMethod m =
              WhileLeaderMethod.of(beanName, bean, method, invocable, annotation.elector(), beans);
          // A prototype's method would be called once per instance ever created, none of them
          // stopped with the context.
          if (beans.containsBeanDefinition(beanName)
              && !beans.getMergedBeanDefinition(beanName).isSingleton()) {
            throw new InvalidWhileLeaderMethodException(
                m.description
                    + " is on a bean of scope '"
                    + beans.getMergedBeanDefinition(beanName).getScope()
                    + "'",
                "Annotate a method of a singleton bean.");
          }
          methods.add(m);
        });
    return bean;
  }

  /**
   * Binds every method to its elector now that all electors exist, or fails the context saying why
   * one cannot run.
   */
  @Override
  public void afterSingletonsInstantiated() {
    List<String> electors = Arrays.asList(beans.getBeanNamesForType(Elector.class, false, false));
    for (WhileLeaderMethod m : methods) {
      String elector = electorOf(m, electors);
      if (!servedElectors.contains(elector)) {
        List<String> misnamed =
            servedElectors.stream().filter(e -> !electors.contains(e)).sorted().toList();
        throw new InvalidWhileLeaderMethodException(
            m.description
                + " is bound to the elector '"
                + elector
                + "', which was built without the @WhileLeader methods"
                + (misnamed.isEmpty()
                    ? ""
                    : " (forElector was given " + misnamed + ", which name no Elector bean)"),
            "Build that Elector with .whileLeader(whileLeaderMethods.forElector(\""
                + elector
                + "\")), whileLeaderMethods being the WhileLeaderMethods bean, or bind the method to another.");
      }
      m.bindTo(elector);
    }
  }

  private String electorOf(WhileLeaderMethod m, List<String> electors) {
    if (!m.electorAttribute.isEmpty()) {
      if (!electors.contains(m.electorAttribute)) {
        throw new InvalidWhileLeaderMethodException(
            m.description
                + " names the elector '"
                + m.electorAttribute
                + "', but the Elector beans are "
                + electors,
            "Set @WhileLeader(elector = ...) to one of them.");
      }
      return m.electorAttribute;
    }
    if (electors.size() == 1) {
      return electors.get(0);
    }
    List<String> primary =
        electors.stream()
            .filter(
                e ->
                    beans.containsBeanDefinition(e) && beans.getMergedBeanDefinition(e).isPrimary())
            .toList();
    if (primary.size() == 1) {
      return primary.get(0);
    }
    throw new InvalidWhileLeaderMethodException(
        m.description
            + " names no elector, and the Elector beans are "
            + electors
            + (electors.isEmpty() ? "" : ", none of them the only @Primary one"),
        "Set @WhileLeader(elector = ...) to the bean name of the Elector whose terms should run it.");
  }
}
