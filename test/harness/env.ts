import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

// n8n-core writes its config under N8N_USER_FOLDER (default ~/.n8n); keep tests out of the home folder.
process.env.N8N_USER_FOLDER ??= mkdtempSync(join(tmpdir(), 'n8n-test-'));
// n8n-core generates and saves a key on first use and says so; a fixed key for tests keeps runs quiet.
process.env.N8N_ENCRYPTION_KEY ??= 'test-only-encryption-key';
// n8n's logger (n8n-core's engine logs every failed node, and the tests cause many on purpose)
// prints nothing unless TEST_VERBOSE=1 asks for it; an explicit N8N_LOG_LEVEL wins.
process.env.N8N_LOG_LEVEL ??= process.env.TEST_VERBOSE === '1' ? 'info' : 'silent';
