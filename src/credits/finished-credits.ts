/**
 * SQL for the credits of everything a run's journal says finished, each once (`run`: the parameter or column
 * holding the run's uid): every completed step and sub-step, but not one beneath a completed step (an embedded
 * run's steps, beneath its `circuit` step), whose credits that step's own include. What a run stopped before its
 * steps finished pays for them: a step still in flight (an agent waiting on a tool approval, an embedded run
 * partway) is not completed, so its finished turns, tool calls and embedded steps count one by one.
 */
export const finishedCreditsSql = (run: string): string => `(
  SELECT COALESCE(sum(s.credits), 0) FROM circuit_run_steps s
   WHERE s.run_uid = ${run} AND s.status = 'completed'
     AND NOT EXISTS (SELECT 1 FROM circuit_run_steps a
                      WHERE a.run_uid = ${run} AND a.status = 'completed' AND left(s.path, length(a.path) + 1) = a.path || '/'))`;
