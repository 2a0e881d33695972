// Runs the client compiled from client.mts (its path in CHESSD_CLIENT_JS,
// set by run.sh) against a real chessd with a redis-server of its own
// (tests/e2e/server.mjs starts both): it plays a game through the API with
// the types generated from openapi.yaml.
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { startServer } from '../e2e/server.mjs';

test('a client generated from openapi.yaml plays a game: clock, stream, 409, draw, PGN', async (t) => {
  const compiled = process.env.CHESSD_CLIENT_JS;
  if (!compiled) throw new Error('CHESSD_CLIENT_JS is not set: run tests/client/run.sh');
  const { playGame } = await import(pathToFileURL(compiled).href);
  const server = await startServer();
  try {
    await playGame(server.base, (line) => t.diagnostic(line));
  } finally {
    await server.stop();
  }
});
