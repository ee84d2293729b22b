/** An error the simulator CLIs print as one line, with a code a caller can match. */
export class SimError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'SimError';
    this.code = code;
  }
}
