// Runs comment/sticky.js against a fake `github` client and `context` described by a JSON
// scenario (argv[2]) and prints what it did as JSON: the result, the API calls, the log.
'use strict';

const fs = require('fs');
const path = require('path');

const { sticky } = require(path.join(__dirname, '..', '..', 'comment', 'sticky.js'));

async function main() {
  const scenario = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const calls = [];
  const log = { warnings: [], infos: [] };
  const api = (name, answer) => async (params) => {
    calls.push({ name, params });
    if (scenario.fail_status) {
      const error = new Error(`HTTP ${scenario.fail_status}`);
      error.status = scenario.fail_status;
      throw error;
    }
    return { data: answer(params) };
  };
  const github = {
    rest: {
      issues: {
        listComments: api('listComments', () => scenario.comments || []),
        createComment: api('createComment', () => ({ id: 1000 })),
        updateComment: api('updateComment', () => ({})),
      },
      pulls: { list: api('pulls.list', () => scenario.pulls || []) },
    },
    paginate: async (method, params) => (await method(params)).data,
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
  const result = await sticky({ github, context, core, env: scenario.env || {} });
  process.stdout.write(JSON.stringify({ result, calls, ...log }));
}

main().catch((error) => {
  process.stderr.write(String(error.stack));
  process.exit(1);
});
