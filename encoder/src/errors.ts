/** An error the encoder CLI prints as one line, with a code a caller can match. */
export class EncoderError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'EncoderError';
    this.code = code;
  }
}
