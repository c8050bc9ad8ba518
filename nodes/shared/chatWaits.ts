import { createHash } from 'crypto';

import { clock } from './clock';
import { MemoryTable, sharedState, type RedisScript } from './store';

// Questions waiting for a reply in the chat, one per (account, person): Send and Wait writes one,
// the account's Messaging Trigger takes it when the person replies. The newest question wins.

export interface ChatWait {
	/** Signed resume link for the trigger only: never sent to the person. */
	url: string;
	waitId: string;
	itemIndex: number;
	responseType: 'approval' | 'freeText';
	single: boolean;
	approveLabel: string;
	declineLabel: string;
	reasked: boolean;
	executionId: string;
	/** On the nodes' clock: memory keeps the expiry when the record is rewritten. */
	expiresAt: number;
}

const MAX_WAIT_MS = 30 * 86_400_000;
const MAX_RECORD_CHARS = 16_384;
const waits = new MemoryTable<string>(4 * 1024 * 1024, (value) => 2 * value.length);

/** The account by its address and client id (never the secret), then the person's digits. */
type Account = { baseUrl: string; clientId: string };

function keyOf(account: Account, phone: string) {
	const id = createHash('sha256').update(`${account.baseUrl}\n${account.clientId}`).digest('hex');
	const state = sharedState();
	return {
		state,
		key: state.kind === 'memory' ? `${id}\n${phone}` : state.key(id, 'chatWait', phone),
	};
}

const SAVE: RedisScript = {
	name: 'messagingChatWaitSave',
	keys: 1,
	lua: `return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])`,
};
const READ: RedisScript = {
	name: 'messagingChatWaitRead',
	keys: 1,
	lua: `return redis.call('GET', KEYS[1])`,
};
/** Deletes the record only while it is still this question's; 1 when taken. */
const TAKE: RedisScript = {
	name: 'messagingChatWaitTake',
	keys: 1,
	lua: `local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).waitId == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0`,
};
/** Marks the record re-asked, once, keeping its expiry; 1 when this call marked it. */
const MARK_REASKED: RedisScript = {
	name: 'messagingChatWaitReasked',
	keys: 1,
	lua: `local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local w = cjson.decode(v)
local ttl = redis.call('PTTL', KEYS[1])
if w.waitId ~= ARGV[1] or w.reasked or ttl <= 0 then return 0 end
w.reasked = true
redis.call('SET', KEYS[1], cjson.encode(w), 'PX', ttl)
return 1`,
};

/** Expires with the wait's limit, at most in 30 days. A shared state that cannot be reached throws. */
export async function saveChatWait(
	account: Account,
	phone: string,
	wait: Omit<ChatWait, 'expiresAt' | 'reasked'>,
	waitTill: Date,
): Promise<void> {
	const expiresAt = Math.min(waitTill.getTime(), clock.now() + MAX_WAIT_MS);
	const value = JSON.stringify({ ...wait, reasked: false, expiresAt });
	const { state, key } = keyOf(account, phone);
	if (state.kind === 'memory') return waits.set(key, value, expiresAt);
	await state.run(SAVE, [key], [value, Math.max(1, Math.round(expiresAt - clock.now()))]);
}

/** Cheap before reading a credential: regular mode with no question open has nothing to find. */
export const noChatWaits = () => sharedState().kind === 'memory' && waits.size().entries === 0;

export async function readChatWait(account: Account, phone: string): Promise<ChatWait | undefined> {
	const { state, key } = keyOf(account, phone);
	return parseWait(state.kind === 'memory' ? waits.get(key) : await state.run(READ, [key], []));
}

function parseWait(value: unknown): ChatWait | undefined {
	if (typeof value !== 'string' || value.length > MAX_RECORD_CHARS) return undefined;
	try {
		const wait = JSON.parse(value) as ChatWait;
		return typeof wait.url === 'string' && typeof wait.waitId === 'string' ? wait : undefined;
	} catch {
		return undefined;
	}
}

// Memory: read and changed without an await between, so atomic in this process.

/** Atomic: of two replies racing, one takes the question. */
export async function takeChatWait(account: Account, phone: string, waitId: string) {
	const { state, key } = keyOf(account, phone);
	if (state.kind !== 'memory') return (await state.run(TAKE, [key], [waitId])) === 1;
	if (parseWait(waits.get(key))?.waitId !== waitId) return false;
	waits.delete(key);
	return true;
}

/** True only for the first call on this question: the person is asked again once. */
export async function markReasked(account: Account, phone: string, waitId: string) {
	const { state, key } = keyOf(account, phone);
	if (state.kind !== 'memory') return (await state.run(MARK_REASKED, [key], [waitId])) === 1;
	const wait = parseWait(waits.get(key));
	if (wait?.waitId !== waitId || wait.reasked) return false;
	waits.set(key, JSON.stringify({ ...wait, reasked: true }), wait.expiresAt);
	return true;
}
