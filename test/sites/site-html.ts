/** Server-rendered markup written the way ordinary sites write it: labels, autocomplete hints, Bootstrap-like classes. */

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => entities[character]!);
}

export function page(options: { brand: string; title: string; main: string; nav?: string; script?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(options.title)} · ${escapeHtml(options.brand)}</title>
  <style>
    body { font-family: system-ui, sans-serif; margin: 0; color: #1d2330; }
    header { display: flex; justify-content: space-between; padding: 12px 24px; border-bottom: 1px solid #e3e6ec; }
    main { max-width: 420px; margin: 40px auto; padding: 0 16px; }
    .form-group { margin-bottom: 16px; }
    .form-group label { display: block; font-weight: 600; margin-bottom: 4px; }
    .form-control { width: 100%; padding: 8px; box-sizing: border-box; }
    .btn { padding: 8px 16px; cursor: pointer; }
    .btn-primary { background: #2f5bea; border: 0; color: #fff; border-radius: 4px; }
    .alert-danger { background: #fdecea; color: #8a1c12; padding: 10px; border-radius: 4px; margin-bottom: 16px; }
  </style>
</head>
<body>
  <header><a class="brand" href="/">${escapeHtml(options.brand)}</a><nav>${options.nav ?? ""}</nav></header>
  <main>
${options.main}
  </main>
${options.script ? `  <script>${options.script}</script>\n` : ""}</body>
</html>
`;
}

export interface FieldOptions {
  id: string;
  name: string;
  label: string;
  type: "text" | "email" | "password";
  autocomplete: string;
  value?: string;
  inputmode?: "numeric";
  maxlength?: number;
  autofocus?: boolean;
}

export function field(options: FieldOptions): string {
  const attributes = [
    `type="${options.type}"`,
    `class="form-control"`,
    `id="${options.id}"`,
    `name="${options.name}"`,
    options.value === undefined ? "" : `value="${escapeHtml(options.value)}"`,
    options.inputmode ? `inputmode="${options.inputmode}"` : "",
    `autocomplete="${options.autocomplete}"`,
    options.maxlength ? `maxlength="${options.maxlength}"` : "",
    "required",
    options.autofocus ? "autofocus" : "",
  ].filter(Boolean);
  return `<div class="form-group">
  <label for="${options.id}">${escapeHtml(options.label)}</label>
  <input ${attributes.join(" ")}>
</div>`;
}

/** A POST form carrying the CSRF token; `body` is already markup. */
export function postForm(options: { action: string; csrfToken: string; body: string; submit?: string; id?: string }): string {
  return `<form method="post" action="${escapeHtml(options.action)}"${options.id ? ` id="${options.id}"` : ""}>
<input type="hidden" name="_csrf" value="${escapeHtml(options.csrfToken)}">
${options.body}
${options.submit ? `<button type="submit" class="btn btn-primary">${escapeHtml(options.submit)}</button>` : ""}
</form>`;
}

export function alertDanger(message: string | undefined): string {
  return message ? `<div class="alert alert-danger" role="alert">${escapeHtml(message)}</div>\n` : "";
}
