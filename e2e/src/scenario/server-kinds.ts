/**
 * The kinds of video server a scenario may name (`server.kind`), as the scenario's
 * checks and the report know them. Pure: how the lab starts each one is in
 * video-server.ts (its launchers are keyed by these names), so reading or rendering a
 * result loads no process code.
 *
 * `node`, the Node server; `ats-edge`, a Traffic Server edge with the sammy_edge plugin
 * (edge/) in front of a Node origin with --pacing off on the namespace's loopback (the
 * player talks to the edge); `nginx`, nginx with the Sammy module (nginx/,
 * native/nginx/), serving the ladder itself. Each paces every response at the
 * player's rtp.
 */
export interface ServerKindDescription {
  /** How the report's server row describes it, before its trains ('' for the Node server: the row has always meant it). */
  setup: string;
  /**
   * Whose trains are the kernel's, in the report and in errors ("the edge's kernel trains"): a server with no
   * burst knob, so burstPackets is refused (trainPackets sets the kernel's trains); null: it takes --burst-packets.
   */
  kernelTrainsOf: string | null;
  /** The protocols it serves the player over in the lab (`server.protocol`). */
  protocols: readonly ServerProtocol[];
}

/**
 * How the player reaches the video server (`server.protocol`): `h1`, plain HTTP/1.1;
 * `h1-tls`, HTTP/1.1 over TLS; `h2`, HTTP/2 over TLS (the server also offers HTTP/1.1 by
 * ALPN, and the report says which one carried each session). TLS uses the lab's own
 * certificate, which Chromium is told to trust.
 */
export type ServerProtocol = 'h1' | 'h1-tls' | 'h2';
export const SERVER_PROTOCOLS: readonly ServerProtocol[] = ['h1', 'h1-tls', 'h2'];

export const SERVER_KINDS = {
  node: { setup: '', kernelTrainsOf: null, protocols: SERVER_PROTOCOLS },
  'ats-edge': { setup: 'a Traffic Server edge (sammy_edge plugin) in front of a Node origin with --pacing off', kernelTrainsOf: 'the edge', protocols: ['h1'] },
  // The module paces nginx's HTTP/2 (docs/server-contract.md "HTTP/2"), but no lab run has used it: not a lab arm yet.
  nginx: { setup: 'nginx with the Sammy module (ngx_http_sammy_module), one worker', kernelTrainsOf: 'nginx', protocols: ['h1', 'h1-tls'] },
} satisfies Record<string, ServerKindDescription>;

export type ServerKind = keyof typeof SERVER_KINDS;

export const SERVER_KIND_NAMES = Object.keys(SERVER_KINDS) as ServerKind[];
