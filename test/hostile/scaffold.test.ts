/** The suite's own tools must be able to fail: a quadratic routine and a leaked secret are caught. */
import { expectLinearTime, expectNoSecret, findSecret } from '../harness/hostile';

describe('hostile-suite tools', () => {
	it('passes a linear routine and fails a quadratic one', () => {
		const linear = expectLinearTime('indexOf', {
			input: (n) => 'a'.repeat(n),
			run: (s) => s.indexOf('b'),
		});
		expect(linear.growth).toBeLessThan(8);
		expect(() =>
			expectLinearTime('quadratic', {
				bytes: 16 * 1024,
				input: (n) => 'a'.repeat(n),
				run: (s) => {
					let count = 0;
					for (let i = 0; i < s.length; i++)
						for (let j = i; j < s.length; j += 1) count += s.charCodeAt(j) & 1;
					return count;
				},
			}),
		).toThrow(/not linear-time/);
	});

	it('finds a secret in its escaped and encoded forms, and only there', () => {
		const secret = 'se"cr\\et<&>';
		expect(findSecret({ a: [{ b: JSON.stringify({ x: secret }) }] }, [secret])).toBeDefined();
		expect(findSecret({ html: 'se&quot;cr\\et&lt;&amp;&gt;' }, [secret])).toBeDefined();
		expect(findSecret({ b64: Buffer.from(secret).toString('base64') }, [secret])).toBeDefined();
		expect(findSecret(new Error(`failed: ${encodeURIComponent(secret)}`), [secret])).toBeDefined();
		expect(findSecret({ clean: 'nothing here' }, [secret])).toBeUndefined();
		expect(() => expectNoSecret('output', { clean: 'nothing here' }, [secret])).not.toThrow();
	});
});
