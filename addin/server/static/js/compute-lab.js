// Compute Lab's task pane: the function list with each argument's help (units included),
// read from the custom-functions metadata the server builds from the functions' docstrings.
import { config } from "./config.js";

function element(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

export function renderFunctions(meta, namespace, container) {
  container.replaceChildren();
  for (const f of meta.functions) {
    const params = f.parameters.map((p) => (p.optional ? `[${p.name}]` : p.name));
    const summary = element("summary", {}, `${namespace}.${f.name}(${params.join(", ")})`);
    const list = element("dl");
    for (const p of f.parameters) {
      const term = element("dt", {}, p.name);
      if (p.optional) term.append(element("span", { class: "optional" }, " (optional)"));
      list.append(term, element("dd", {}, p.description || ""));
    }
    const details = element(
      "details",
      { "data-function": f.name },
      summary,
      element("p", { class: "small mb-1" }, f.description || ""),
      list,
    );
    container.append(details);
  }
}

function filterFunctions(container, text) {
  const needle = text.trim().toLowerCase();
  for (const details of container.querySelectorAll("details")) {
    details.hidden = needle !== "" && !details.textContent.toLowerCase().includes(needle);
  }
}

function startSignIn() {
  const form = document.getElementById("sign-in");
  if (!form || !globalThis.computeLabToken) return;
  const status = document.getElementById("sign-in-status");
  const show = () => {
    status.textContent = globalThis.computeLabToken.get() ? "Signed in (token saved)." : "Not signed in.";
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("sign-in-token");
    if (input.value.trim()) globalThis.computeLabToken.set(input.value);
    else globalThis.computeLabToken.clear();
    input.value = "";
    show();
  });
  show();
}

// What each insert button inserts, for the line the task pane shows once it has run.
const INSERTS = {
  "insert-plan": "a TRAIN_PLAN block (the example plan)",
  "insert-runs": "the reference runs table",
  "insert-accelerators": "the accelerator catalogue table",
};

async function selectedAddress() {
  try {
    await Office.onReady();
    return await Excel.run(async (context) => {
      const range = context.workbook.getSelectedRange().load("address");
      await context.sync();
      return range.address;
    });
  } catch (error) {
    return null; // no cell selected (a shape, say): the script itself says so
  }
}

// xlwings runs each insert (its xw-click handler disables the button, runs the script, shows a
// failure in #global-error-alert, and enables the button again); once the button is enabled,
// say what was inserted where, or that nothing was.
function startInsertConfirmations() {
  const status = document.getElementById("insert-status");
  if (!status) return;
  for (const [id, what] of Object.entries(INSERTS)) {
    const button = document.getElementById(id);
    if (!button) continue;
    let pending = null;
    button.addEventListener("click", () => {
      status.textContent = "";
      status.className = "small mb-3";
      status.dataset.state = "running";
      pending = selectedAddress();
    });
    const finished = async () => {
      if (pending === null || button.hasAttribute("disabled")) return;
      const address = await pending;
      pending = null;
      const alert = document.getElementById("global-error-alert");
      const failed = alert !== null && !alert.classList.contains("d-none");
      if (failed) {
        status.textContent = "Nothing was inserted: the reason is shown at the top.";
        status.className = "small mb-3 text-danger";
        status.dataset.state = "failed";
      } else {
        status.textContent = `Inserted ${what}${address ? ` at ${address}` : ""}.`;
        status.className = "small mb-3 text-success";
        status.dataset.state = "done";
      }
    };
    new MutationObserver(finished).observe(button, { attributes: true, attributeFilter: ["disabled"] });
  }
}

async function start() {
  startSignIn();
  startInsertConfirmations();
  const pane = document.getElementById("compute-lab");
  const container = document.getElementById("function-list");
  if (!pane || !container) return;
  try {
    const url = `${window.location.origin}${config.appPath}/xlwings/custom-functions-meta.json`;
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    renderFunctions(await response.json(), pane.dataset.namespace, container);
  } catch (error) {
    container.textContent = `The function list could not be loaded (${error.message}).`;
  }
  const filter = document.getElementById("function-filter");
  filter.addEventListener("input", () => filterFunctions(container, filter.value));
  document.body.dataset.computeLabReady = "true";
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
