/** The login form: POST /auth/login as JSON (the TCP listener takes no form bodies), then on to `next`. */
const form = document.getElementById('login') as HTMLFormElement;
const error = document.getElementById('error')!;

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const data = new FormData(form);
  const next = new URLSearchParams(location.search).get('next') ?? '/mobile';
  error.textContent = '';
  void fetch('/auth/login', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: data.get('username'), password: data.get('password'), next }),
  }).then(
    async (res) => {
      const body = (await res.json().catch(() => ({}))) as { error?: string; next?: string };
      if (res.ok) return location.assign(body.next ?? '/mobile');
      const wait = res.headers.get('Retry-After');
      error.textContent = res.status === 429 && wait ? `${body.error ?? 'Too many attempts'}: try again in ${wait} s` : (body.error ?? `HTTP ${res.status}`);
    },
    (err: Error) => (error.textContent = err.message),
  );
});
