// The second run of the body suites (jest.config.js): every server the helpers start
// sends bodies through Node's streams.
process.env['SAMMY_TEST_BODY_PATH'] = 'stream';
