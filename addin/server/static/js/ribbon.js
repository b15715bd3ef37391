// Compute Lab's ribbon buttons (manifest.xml: ExecuteFunction actions): each runs one custom
// script through xlwings Server and reports completion to Excel, also when the script fails.
const COMPUTE_LAB_RIBBON = {
  "compute-lab-insert-plan": "insert_train_plan",
  "compute-lab-insert-runs": "insert_reference_runs",
  "compute-lab-insert-accelerators": "insert_accelerators",
};

for (const [action, scriptName] of Object.entries(COMPUTE_LAB_RIBBON)) {
  Office.actions.associate(action, async (event) => {
    try {
      await xlwings.runPython({ scriptName: scriptName, errorDisplayMode: "alert" });
    } finally {
      event.completed();
    }
  });
}
