package kotlin.coroutines;

/**
 * What javadoc sees of the stdlib's {@code ContinuationInterceptor}, without its
 * {@code DefaultImpls} (see {@code CoroutineContext.java} beside it).
 */
public interface ContinuationInterceptor extends CoroutineContext.Element {
    Key Key = null;

    <T> Continuation<T> interceptContinuation(Continuation<? super T> continuation);

    void releaseInterceptedContinuation(Continuation<?> continuation);

    final class Key implements CoroutineContext.Key<ContinuationInterceptor> {
        private Key() {
        }
    }
}
