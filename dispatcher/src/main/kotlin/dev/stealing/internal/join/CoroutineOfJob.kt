package dev.stealing.internal.join

import dev.stealing.internal.queue.TaskMatcher
import kotlinx.coroutines.Job
import kotlin.coroutines.Continuation

/**
 * [TaskMatcher] for a coroutine: whether the queued [task] is a dispatch of the coroutine whose
 * [Job] is the target. kotlinx dispatches coroutines as tasks that are also their
 * [Continuation] (a first dispatch or a resumption), so the job is found in the task's context.
 */
internal object CoroutineOfJob : TaskMatcher {
    override fun matches(task: Runnable, target: Any): Boolean =
        task is Continuation<*> && task.context[Job] === target
}
