import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

// n8n-core writes its config under N8N_USER_FOLDER (default ~/.n8n); keep tests out of the home folder.
process.env.N8N_USER_FOLDER ??= mkdtempSync(join(tmpdir(), 'n8n-test-'));
// n8n-core generates and saves a key on first use and says so; a fixed key for tests keeps runs quiet.
process.env.N8N_ENCRYPTION_KEY ??= 'test-only-encryption-key';
