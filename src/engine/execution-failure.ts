/** A run that failed; `credits` is what its finished steps cost (model tokens are spent either way). */
export class ExecutionFailure extends Error {
  constructor(message: string, readonly credits: number, readonly stepId?: string) {
    super(message);
  }
}
