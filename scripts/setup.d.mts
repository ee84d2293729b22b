// Types of setup.mjs for the TypeScript that imports it (the server bench installs its
// Debian packages with the same helper as `npm start`).
export declare const ROOT: string;
export declare const APT_PACKAGES: Record<string, string>;
/** What the edge needs from Debian: Traffic Server, its plugin headers and a C compiler. */
export declare const EDGE_APT_PACKAGES: string[];
/** What nginx with the Sammy module needs from Debian: nginx-core, nginx-dev (its source tree), a C compiler and make. */
export declare const NGINX_APT_PACKAGES: string[];
export declare function say(line: string): void;
export declare function run(cmd: string, args: string[], opts?: object): number;
export declare function hasCommand(cmd: string): boolean;
export declare function isRoot(): boolean;
export declare function checkNodeVersion(): void;
export declare function ensureNpmDependencies(): void;
/** Installs the missing Debian packages as root, or prints the command; returns those still missing. */
export declare function ensureAptPackages(packages: string[]): string[];
/** Runs a TypeScript command line in the foreground with this process's arguments, passing on SIGINT and SIGTERM; exits with its code. */
export declare function runInForeground(entry: string, cwd: string): void;
