// Runs comment/sticky.js against a fake `github` client and `context` described by a JSON
// scenario (argv[2]) and prints what it did as JSON: the result, the API calls, the log, and
// the comments left on the pull request. `login` is whom the token comments as, `viewer` what
// GraphQL's viewer answers for it (null: refused). `jobs: N` runs N jobs at once against one
// pull request; every API call yields to the event loop first, so their calls interleave as on
// a real runner.
'use strict';

const fs = require('fs');
const path = require('path');

const { sticky } = require(path.join(__dirname, '..', '..', 'comment', 'sticky.js'));

async function main() {
  const scenario = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const calls = [];
  const log = { warnings: [], infos: [] };
  const comments = (scenario.comments || []).map((c) => ({ ...c }));
  let nextId = Math.max(999, ...comments.map((c) => c.id)) + 1;
  const api = (name, answer) => async (params) => {
    await new Promise((resolve) => setImmediate(resolve));
    calls.push({ name, params });
    if (scenario.fail_status) {
      const error = new Error(`HTTP ${scenario.fail_status}`);
      error.status = scenario.fail_status;
      throw error;
    }
    return { data: answer(params) };
  };
  const find = (id) => {
    const found = comments.find((c) => c.id === id);
    if (!found) {
      const error = new Error('Not Found');
      error.status = 404;
      throw error;
    }
    return found;
  };
  const github = {
    rest: {
      issues: {
        listComments: api('listComments', () => comments.map((c) => ({ ...c }))),
        createComment: api('createComment', ({ body }) => {
          const made = { id: nextId++, user: { login: scenario.login || 'github-actions[bot]' }, body };
          comments.push(made);
          return { id: made.id, user: { ...made.user } };
        }),
        updateComment: api('updateComment', ({ comment_id: id, body }) => {
          find(id).body = body;
          return {};
        }),
        deleteComment: api('deleteComment', ({ comment_id: id }) => {
          comments.splice(comments.indexOf(find(id)), 1);
          return {};
        }),
      },
      pulls: { list: api('pulls.list', () => scenario.pulls || []) },
    },
    paginate: async (method, params) => (await method(params)).data,
    // GraphQL's viewer: scenario.viewer, or refused as it is to a token without the right.
    graphql: async (query) => {
      await new Promise((resolve) => setImmediate(resolve));
      calls.push({ name: 'graphql', params: { query } });
      const viewer = scenario.viewer === undefined
        ? { __typename: 'Bot', login: 'github-actions' } : scenario.viewer;
      if (!viewer || scenario.fail_status) {
        const error = new Error('Resource not accessible by integration');
        error.status = 403;
        throw error;
      }
      return { viewer };
    },
  };
  const context = {
    payload: scenario.payload,
    actor: scenario.actor || 'someone',
    repo: { owner: 'o', repo: 'r' },
    serverUrl: 'https://github.com',
    runId: 42,
  };
  const core = {
    warning: (m) => log.warnings.push(m),
    info: (m) => log.infos.push(m),
  };
  const jobs = Array.from({ length: scenario.jobs || 1 }, (_, i) => sticky({
    github, context, core, env: { ...(scenario.env || {}), ...((scenario.job_env || [])[i] || {}) },
  }));
  const results = await Promise.all(jobs);
  process.stdout.write(JSON.stringify({
    result: results[0], results, calls, comments, ...log,
  }));
}

main().catch((error) => {
  process.stderr.write(String(error.stack));
  process.exit(1);
});
