package kotlin.coroutines;

import kotlin.jvm.functions.Function2;

/**
 * What javadoc sees of the stdlib's {@code CoroutineContext} (src/javadoc/stdlib): its Java
 * signatures without the {@code DefaultImpls} classes that the stdlib compiles into its
 * interfaces, which the doclet would otherwise list on every page of a coroutine dispatcher.
 * Never compiled into the library; javadoc reads it in place of the class file.
 */
public interface CoroutineContext {
    <E extends Element> E get(Key<E> key);

    <R> R fold(R initial, Function2<? super R, ? super Element, ? extends R> operation);

    CoroutineContext plus(CoroutineContext context);

    CoroutineContext minusKey(Key<?> key);

    interface Key<E extends Element> {
    }

    interface Element extends CoroutineContext {
        Key<?> getKey();
    }
}
