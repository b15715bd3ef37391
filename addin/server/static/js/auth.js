// Sign-in (replaces xlwings Server's own auth.js): xlwings' custom functions and scripts call
// globalThis.getAuth() before every request and send its token as the Authorization header.
// With `compute-lab serve --require-sign-in` (xlwings Server's "custom" auth provider), the
// token is the one `compute-lab serve token create NAME` printed, pasted once into the task
// pane's sign-in field and kept in this browser's local storage under TOKEN_KEY.
const COMPUTE_LAB_TOKEN_KEY = "compute-lab-token";

globalThis.computeLabToken = {
  get: () => globalThis.localStorage?.getItem(COMPUTE_LAB_TOKEN_KEY) || "",
  set: (token) => globalThis.localStorage?.setItem(COMPUTE_LAB_TOKEN_KEY, token.trim()),
  clear: () => globalThis.localStorage?.removeItem(COMPUTE_LAB_TOKEN_KEY),
};

globalThis.getAuth = async function () {
  if (config.authProviders.includes("entraid")) {
    const token = await xlwings.getAccessToken();
    return { token: token, provider: "entraid" };
  }
  if (config.authProviders.includes("custom")) {
    const token = globalThis.computeLabToken.get();
    return { token: token ? `Bearer ${token}` : "", provider: "custom" };
  }
  return { token: "", provider: "" };
};
