/** An error with a code a caller can match; the CLI prints it as one line. */
export class ServerError extends Error {
  readonly code: string;
  /** The option an SAMMY_SERVER_INVALID_OPTION error is about. */
  readonly option: string | null;

  constructor(code: string, message: string, option: string | null = null) {
    super(message);
    this.name = 'ServerError';
    this.code = code;
    this.option = option;
  }
}

/** A bad option: names the option, the value given and what is accepted. */
export function invalidOption(option: string, value: unknown, accepted: string): ServerError {
  return new ServerError('SAMMY_SERVER_INVALID_OPTION', `invalid ${option}: ${JSON.stringify(value)} (accepted: ${accepted})`, option);
}
