/**
 * The lab's coded error: a bad scenario, result or command names what was wrong and
 * what to do. Thrown by the lab's runtime and by the offline report alike, so it
 * lives apart from both.
 */
export class LabError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'LabError';
  }
}
