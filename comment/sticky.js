// Posts trtcheck's comment.md as one sticky pull-request comment, or updates it.
// trtcheck (Python) decides what the comment says; this file only finds the pull request and the
// earlier comment, and never fails the job: a fork, Dependabot or a missing permission is a warning.
'use strict';

const fs = require('fs');
const path = require('path');

// One limit for the comment, in code points, shared with trtcheck's renderer (Python).
const LIMIT = require(path.join(__dirname, '..', 'trtcheck', 'limits.json')).comment;
const CUT_NOTE = '\n\n… cut: see the report artifact.\n';
const ZWJ = '\u200d';

function marker(header) {
  return `<!-- trtcheck-sticky-comment:${encodeURIComponent(header || 'trtcheck')} -->`;
}

function runUrl(context) {
  const run = context.payload.workflow_run;
  if (run && run.html_url) return run.html_url;
  const { owner, repo } = context.repo;
  return `${context.serverUrl}/${owner}/${repo}/actions/runs/${context.runId}`;
}

// The comment file is data from a job that ran pull-request code: mentions are defused again here.
function body({ file, header, exitCode, context }) {
  let text = '';
  try {
    text = file ? fs.readFileSync(file, 'utf8') : '';
  } catch {
    text = '';
  }
  if (!text.trim()) {
    const code = /^\d+$/.test(exitCode || '') ? ` (exit code ${exitCode})` : '';
    text = `### trtcheck: ⚠️ could not run${code}\n\nNo report was written for this commit, so `
      + `this pull request has no result. See [the run](${runUrl(context)}).\n`;
  }
  return `${marker(header)}\n${cut(defuse(text))}`;
}

// Mentions, references, an entity that spells "@", images and raw HTML tags other than the
// comment's own (details, summary, sub, br) are made inert. A zero-width joiner after the
// trigger stops GitHub from acting on it; the text still reads the same.
function defuse(text) {
  return text
    .replace(/@(?=[\p{L}\p{N}_])/gu, `@${ZWJ}`)
    .replace(/#(?=\p{N})/gu, `#${ZWJ}`)
    .replace(/\b(gh)-(?=\p{N})/giu, `$1-${ZWJ}`)
    .replace(/&(?=(#0*64|#x0*40|commat);)/gi, '&amp;')
    .replace(/!(?=\[)/g, `!${ZWJ}`)
    .replace(/<(?!\/?(?:details|summary|sub|br)\s*\/?>)/gi, '&lt;');
}

// At most LIMIT code points, so that a surrogate pair is never split.
function cut(text) {
  const points = Array.from(text);
  if (points.length <= LIMIT) return text;
  return points.slice(0, LIMIT - Array.from(CUT_NOTE).length).join('') + CUT_NOTE;
}

// Why this run may not comment on its pull request, or '' when it may.
function readOnlyReason(context) {
  const pr = context.payload.pull_request;
  if (!pr) return '';
  if (context.actor === 'dependabot[bot]') return 'a Dependabot pull request gets a read-only token';
  const head = pr.head && pr.head.repo;
  const base = context.payload.repository;
  if (!head || !base || head.full_name !== base.full_name) {
    return 'a pull request from a fork gets a read-only token; use the workflow_run variant';
  }
  return '';
}

async function pullRequestNumber({ github, context, given }) {
  if (/^\d+$/.test(given || '')) return Number(given);
  const payload = context.payload;
  if (payload.pull_request) return payload.pull_request.number;
  const run = payload.workflow_run;
  if (!run) return null;
  const own = (run.pull_requests || []).find((pr) => pr.head && pr.head.sha === run.head_sha);
  if (own) return own.number;
  // A fork's pull request is not listed on the run: find it by head branch, then check the commit.
  const owner = run.head_repository && run.head_repository.owner && run.head_repository.owner.login;
  if (!owner || !run.head_branch) return null;
  const pulls = await github.paginate(github.rest.pulls.list, {
    ...context.repo, state: 'open', head: `${owner}:${run.head_branch}`, per_page: 100,
  });
  const match = pulls.find((pr) => pr.head && pr.head.sha === run.head_sha);
  return match ? match.number : null;
}

// The login the token comments as: comment-author when given, else GraphQL's viewer, which
// answers for the workflow's token, a GitHub App's token and a personal token alike (REST
// GET /user refuses the first two). A bot's login there may lack the "[bot]" that a comment's
// author carries. null when the token may not ask: the comment it creates then says.
async function ownLogin({ github, core, env }) {
  if (env.TRTCHECK_COMMENT_AUTHOR) return env.TRTCHECK_COMMENT_AUTHOR;
  try {
    const { viewer } = await github.graphql('query { viewer { __typename login } }');
    const bot = viewer.__typename === 'Bot' && !viewer.login.endsWith('[bot]');
    return bot ? `${viewer.login}[bot]` : viewer.login;
  } catch (error) {
    core.info(`could not ask whose token this is (${error.message}): the comment it creates says`);
    return null;
  }
}

async function sticky({ github, context, core, env = process.env }) {
  const reason = readOnlyReason(context);
  if (reason) {
    core.warning(`trtcheck comment not posted: ${reason}.`);
    return 'skipped';
  }
  const header = env.TRTCHECK_COMMENT_HEADER || 'trtcheck';
  try {
    const number = await pullRequestNumber({ github, context, given: env.TRTCHECK_PR_NUMBER });
    if (!number) {
      core.warning('trtcheck comment not posted: no pull request found for this run.');
      return 'skipped';
    }
    const text = body({
      file: env.TRTCHECK_COMMENT_FILE, header, exitCode: env.TRTCHECK_EXIT_CODE, context,
    });
    const issue = { ...context.repo, issue_number: number };
    // Only comments by this token's login: another's comment that copies the marker is not ours.
    const ours = async (author) => (await github.paginate(github.rest.issues.listComments,
      { ...issue, per_page: 100 })).filter((c) => c.user && c.user.login === author
      && typeof c.body === 'string' && c.body.startsWith(marker(header)))
      .sort((a, b) => a.id - b.id);
    const author = await ownLogin({ github, core, env });
    // Found again right before creating: another job may have created it meanwhile.
    const found = author && (await ours(author))[0];
    if (found) {
      await github.rest.issues.updateComment({ ...context.repo, comment_id: found.id, body: text });
      core.info(`updated trtcheck comment ${found.id} on #${number}`);
      return 'updated';
    }
    const { data: created } = await github.rest.issues.createComment({ ...issue, body: text });
    // Two jobs that both found none have both created one: each keeps the oldest, with its
    // own text, and deletes the others, so one comment is left. The same when the login was
    // not known before: the comment just created names it, and an older one is kept.
    const [oldest, ...extra] = await ours(created.user.login);
    for (const other of extra) {
      try {
        await github.rest.issues.deleteComment({ ...context.repo, comment_id: other.id });
      } catch (error) {
        if (error.status !== 404) throw error; // the other job deleted it first
      }
    }
    if (oldest && oldest.id !== created.id) {
      await github.rest.issues.updateComment({ ...context.repo, comment_id: oldest.id, body: text });
      core.info(`updated trtcheck comment ${oldest.id} on #${number} (another job had created it)`);
      return 'updated';
    }
    core.info(`created trtcheck comment on #${number}`);
    return 'created';
  } catch (error) {
    if (error.status === 403 || error.status === 401) {
      core.warning(`trtcheck comment skipped: the token cannot write to the pull request `
        + `(${error.message}); it needs pull-requests: write`);
      return 'skipped';
    }
    core.warning(`trtcheck comment not posted: ${error.message}`);
    return 'failed';
  }
}

module.exports = {
  sticky, body, marker, pullRequestNumber, readOnlyReason, defuse, cut, LIMIT,
};
