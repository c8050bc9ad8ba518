/**
 * Bounded memory: what outside text can make the process keep. Heap is measured after a full
 * garbage collection, before and after, in the same run.
 */
import { setFlagsFromString } from 'v8';
import { runInNewContext } from 'vm';

import { PHONE_CACHE_BYTES, normalizePhone, phoneCacheBytes } from '../../nodes/shared/phone';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
	gc();
	gc();
	return process.memoryUsage().heapUsed;
}

describe('the phone-number cache', () => {
	it('keeps nothing of 500 different 1 MB senders (refused before parsing, never cached)', () => {
		const before = heapAfterGc();
		for (let i = 0; i < 500; i++) {
			const sender = `${i}${' '.repeat(1024 * 1024)}#1`;
			expect('problem' in normalizePhone(sender)).toBe(true);
		}
		const grown = heapAfterGc() - before;
		// 500 MB went through (a cache of them kept about 1 GB before); what stays must be under
		// 1 % of it. The bound is not "under one sender": heap-after-GC readings move by about
		// 1 MB on a busy machine (1.07 MB seen once), and that says nothing about the cache.
		expect(grown / (1024 * 1024)).toBeLessThan(5);
	});

	it('is bounded in bytes however many different numbers pass, and keeps no refusals', () => {
		const before = heapAfterGc();
		for (let i = 0; i < 50_000; i++) normalizePhone(`+62 812 ${String(10_000_000 + i)}`);
		for (let i = 0; i < 50_000; i++) normalizePhone(`not a number ${i}`);
		expect(phoneCacheBytes()).toBeLessThanOrEqual(PHONE_CACHE_BYTES);
		const grown = heapAfterGc() - before;
		// The cache's own bound plus V8's map overhead: within 4 times the budget.
		expect(grown / PHONE_CACHE_BYTES).toBeLessThan(4);
	});
});
