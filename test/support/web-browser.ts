/** A browser of one client address: keeps its session cookie, reads CSRF tokens from forms. */
export function webBrowser(baseUrl: string, ip: string) {
  let cookie = '';
  const request = async (method: string, path: string, body?: URLSearchParams | FormData) => {
    const headers: Record<string, string> = { 'x-forwarded-for': ip };
    if (cookie) headers.cookie = cookie;
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    const set = res.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0];
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  };
  const csrf = async (path: string) => /name="_csrf" value="([^"]+)"/.exec((await request('GET', path)).text)![1];
  return {
    request,
    csrf,
    async signIn(username: string, password: string) {
      const token = await csrf('/settings/sign-in');
      const started = performance.now();
      const res = await request('POST', '/settings/sign-in', new URLSearchParams({ _csrf: token, username, password }));
      return { status: res.status, ms: performance.now() - started };
    },
    signOut() {
      cookie = '';
    },
    /** The session cookie (`name=value`), for requests made by hand. */
    get cookie() {
      return cookie;
    },
  };
}
