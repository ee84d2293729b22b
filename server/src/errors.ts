import { STATUS_CODES } from 'node:http';

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

/**
 * The one shape of every error response the server sends: the HTTP status, a
 * stable code to match on, the status text, and a fixed message. The message never
 * repeats what the request said (its path, its headers).
 */
export interface ErrorResponseBody {
  statusCode: number;
  code: string;
  error: string;
  message: string;
}

/** The code and fixed message for each status the server answers with. */
const ERROR_CODES: Record<number, { code: string; message: string }> = {
  400: { code: 'SAMMY_BAD_REQUEST', message: 'the request could not be parsed' },
  403: { code: 'SAMMY_FORBIDDEN', message: 'this path is not served' },
  404: { code: 'SAMMY_NOT_FOUND', message: 'no such file or route' },
  408: { code: 'SAMMY_REQUEST_TIMEOUT', message: 'the request did not arrive in time' },
  412: { code: 'SAMMY_PRECONDITION_FAILED', message: 'a precondition (If-Match, If-Unmodified-Since) failed' },
  416: { code: 'SAMMY_RANGE_NOT_SATISFIABLE', message: 'the range lies outside the file' },
  431: { code: 'SAMMY_HEADERS_TOO_LARGE', message: 'the request head exceeds the size limit' },
  500: { code: 'SAMMY_INTERNAL_ERROR', message: 'the server failed; the failure is logged' },
};

/** The body for `statusCode`; `code` and `message` replace the defaults for that status (both must be the server's own text). */
export function errorResponseBody(statusCode: number, code?: string, message?: string): ErrorResponseBody {
  const known = ERROR_CODES[statusCode] ?? ERROR_CODES[statusCode >= 500 ? 500 : 400]!;
  return {
    statusCode,
    code: code ?? known.code,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message: message ?? known.message,
  };
}

/** A whole HTTP/1.1 error response, for writing to a socket the HTTP layer has given up on. */
export function rawErrorResponse(statusCode: number): string {
  const body = JSON.stringify(errorResponseBody(statusCode));
  return (
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Error'}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
