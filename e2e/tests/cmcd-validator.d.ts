/** The part of `@montevideo-tech/cmcd-validator` (which ships no types) the player checks use. */
declare module '@montevideo-tech/cmcd-validator' {
  export interface CmcdValidation {
    valid: boolean;
    errors: { type: string; key?: string; value?: unknown; description?: string }[];
    warnings: { type: string; key?: string; value?: unknown; description?: string }[];
  }
  export interface CmcdValidatorConfig {
    customKey?: { key: string; type: 'boolean' | 'string' | 'token' | 'number'; headerType?: string }[];
    specificKey?: string[];
  }
  /** Validates the CMCD headers of a raw HTTP request (request line, then one header per line). */
  export function CMCDHeaderValidator(request: string, config?: CmcdValidatorConfig, warningFlag?: boolean): CmcdValidation;
}
