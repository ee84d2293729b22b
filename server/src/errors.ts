/** An error with a code a caller can match; the CLI prints it as one line. */
export class ServerError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'ServerError';
    this.code = code;
  }
}

/** A bad option: names the option, the value given and what is accepted. */
export function invalidOption(option: string, value: unknown, accepted: string): ServerError {
  return new ServerError('SAMMY_SERVER_INVALID_OPTION', `invalid ${option}: ${JSON.stringify(value)} (accepted: ${accepted})`);
}
