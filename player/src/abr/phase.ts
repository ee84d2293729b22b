/**
 * The two phases of a session (docs/records.md): `initial` from the play request
 * to the first frame, unpaced; `playing` after it, paced.
 */
export type Phase = 'initial' | 'playing';
