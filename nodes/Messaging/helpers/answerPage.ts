// Plain HTML, no scripts or assets, no referrer (the link is a credential), never cached.

export interface PageContent {
	title: string;
	lines: string[];
	/** Posts to the page's signed address; the button's name and value go only when it is pressed. */
	form?: {
		text?: { label: string; value?: string; maxLength: number };
		button: { label: string; name: string; value: string };
		error?: string;
	};
}

const STYLE = [
	'body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1f2328}',
	'main{max-width:32rem;margin:3rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}',
	'h1{font-size:1.3rem;margin:0 0 1rem}',
	'p{line-height:1.5;white-space:pre-wrap}',
	'label{display:block;font-weight:600;margin:1rem 0 .4rem}',
	'textarea{box-sizing:border-box;width:100%;min-height:8rem;padding:.6rem;font:inherit;border:1px solid #c9ccd1;border-radius:8px}',
	'button{margin-top:1rem;padding:.7rem 1.4rem;font:inherit;font-weight:600;color:#fff;background:#1f7a4d;border:0;border-radius:8px}',
	'.error{color:#b42318}',
].join('');

function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function renderPage({ title, lines, form }: PageContent): string {
	const paragraphs = lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('');
	const formHtml = form
		? `<form method="post">${form.error ? `<p class="error">${escapeHtml(form.error)}</p>` : ''}${form.text ? `<label for="text">${escapeHtml(form.text.label)}</label><textarea id="text" name="text" maxlength="${form.text.maxLength}" required>${escapeHtml(form.text.value ?? '')}</textarea>` : ''}<button type="submit" name="${escapeHtml(form.button.name)}" value="${escapeHtml(form.button.value)}">${escapeHtml(form.button.label)}</button></form>`
		: '';
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main><h1>${escapeHtml(title)}</h1>${paragraphs}${formHtml}</main></body></html>`;
}

export interface PageResponse {
	writeHead(status: number, headers: Record<string, string>): unknown;
	end(body: string): unknown;
}

export function sendPage(res: PageResponse, status: number, page: PageContent): void {
	const html = renderPage(page);
	res.writeHead(status, {
		'content-type': 'text/html; charset=utf-8',
		'content-length': String(Buffer.byteLength(html)),
		'content-security-policy':
			"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
		'referrer-policy': 'no-referrer',
		'cache-control': 'no-store',
		'x-content-type-options': 'nosniff',
	});
	res.end(html);
}
