// The part of m3u8-parser (video.js's HLS parser, no types of its own) the tests use.
declare module 'm3u8-parser' {
  export interface ParsedSegment {
    uri: string;
    duration: number;
    map?: { uri: string };
  }

  export interface ParsedVariant {
    uri: string;
    /** EXT-X-STREAM-INF attributes; BANDWIDTH is parsed to a number, the rest stay strings. */
    attributes: {
      BANDWIDTH?: number;
      'AVERAGE-BANDWIDTH'?: string;
      CODECS?: string;
      RESOLUTION?: { width: number; height: number };
      'FRAME-RATE'?: number;
      AUDIO?: string;
    };
  }

  export interface ParsedManifest {
    version?: number;
    targetDuration?: number;
    mediaSequence?: number;
    playlistType?: string;
    endList?: boolean;
    independentSegments?: boolean;
    segments: ParsedSegment[];
    playlists?: ParsedVariant[];
    mediaGroups?: { AUDIO: Record<string, Record<string, { default: boolean; autoselect: boolean; uri?: string }>> };
  }

  /** One line as the parse stream reads it, before the parser keeps what it knows. */
  export interface ParseEvent {
    type: string;
    tagType?: string;
    attributes?: Record<string, string>;
  }

  export class Parser {
    manifest: ParsedManifest;
    parseStream: { on(type: 'data', listener: (event: ParseEvent) => void): void };
    on(type: 'warn' | 'info', listener: (event: { message: string }) => void): void;
    push(chunk: string): void;
    end(): void;
  }
}
