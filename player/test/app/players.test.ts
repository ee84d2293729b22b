import { taggedUrl } from '../../src/app/players.js';

test("taggedUrl: the compared session's requests carry its tag, keeping their own query", () => {
  expect(taggedUrl('/media/chunk-4-00002.m4s', 'compare', 'http://h/?arm=control')).toBe('http://h/media/chunk-4-00002.m4s?sammy-session=compare');
  expect(taggedUrl('http://h/m.mpd?CMCD=rtp%3D100', 'compare', 'http://h/')).toBe('http://h/m.mpd?CMCD=rtp%3D100&sammy-session=compare');
});
