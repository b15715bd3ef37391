// A stand-in for Microsoft's office.js, for tests only: the task pane and the custom-functions
// JavaScript served by `compute-lab serve` run unchanged in headless Chromium on top of it.
// It models one workbook (sheets of cells, a selection), records every write in
// window.__writes, and answers CustomFunctionsRuntime up to window.__fakeConfig.runtime.
(function () {
  "use strict";
  const cfg = Object.assign({ runtime: "1.4", excelApi: "1.12" }, window.__fakeConfig || {});
  const writes = (window.__writes = []);
  const sheets = [{ name: "Sheet1", cells: new Map(), tables: [] }];
  const book = (window.__workbook = { name: "Book1.xlsx", sheets, active: 0, selection: [0, 0] });
  const functions = (window.__customFunctions = {});
  const ribbon = (window.__ribbonActions = {});

  const version = (v) => v.split(".").map(Number);
  const atMost = (a, b) => {
    const [x, y] = [version(a), version(b)];
    return x[0] < y[0] || (x[0] === y[0] && (x[1] || 0) <= (y[1] || 0));
  };
  const supported = { CustomFunctionsRuntime: cfg.runtime, ExcelApi: cfg.excelApi };

  const column = (n) => {
    let s = "";
    for (n += 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
    return s;
  };
  const parseCell = (a) => {
    const m = /^\$?([A-Z]+)\$?(\d+)$/.exec(a);
    let c = 0;
    for (const ch of m[1]) c = c * 26 + ch.charCodeAt(0) - 64;
    return [Number(m[2]) - 1, c - 1];
  };
  const addressOf = (r, c, rows, cols) =>
    `${column(c)}${r + 1}` + (rows > 1 || cols > 1 ? `:${column(c + cols - 1)}${r + rows}` : "");

  const loadable = (obj) => {
    obj.load = () => obj;
    obj.isNullObject = obj.isNullObject || false;
    return obj;
  };
  const collection = (items) => loadable({ items, getCount: () => ({ value: items.length }) });
  const nullObject = () => loadable({ isNullObject: true, items: [] });

  function Range(sheetIndex, r, c, rows, cols) {
    const sheet = sheets[sheetIndex];
    const grid = (f) =>
      Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => f(r + i, c + j)));
    const cell = (i, j) => sheet.cells.get(`${i},${j}`) || {};
    const store = (kind, matrix) => {
      writes.push({ kind, sheet: sheet.name, address: addressOf(r, c, rows, cols), [kind]: matrix });
      matrix.forEach((row, i) =>
        row.forEach((v, j) => {
          const key = `${r + i},${c + j}`;
          const text = typeof v === "string" && v.startsWith("=");
          sheet.cells.set(key, kind === "formulas" && text ? { formula: v } : { value: v });
        }),
      );
    };
    const range = loadable({
      get address() {
        return `${sheet.name}!${addressOf(r, c, rows, cols)}`;
      },
      rowIndex: r,
      columnIndex: c,
      rowCount: rows,
      columnCount: cols,
      get values() {
        return grid((i, j) => (cell(i, j).value ?? cell(i, j).formula ?? ""));
      },
      set values(m) {
        store("values", m);
      },
      get formulas() {
        return grid((i, j) => cell(i, j).formula ?? cell(i, j).value ?? "");
      },
      set formulas(m) {
        store("formulas", m);
      },
      get numberFormat() {
        return grid(() => "General");
      },
      set numberFormat(m) {
        writes.push({ kind: "numberFormat", address: addressOf(r, c, rows, cols), numberFormat: m });
      },
      format: { autofitColumns() {}, autofitRows() {}, font: {}, fill: {} },
      worksheet: null,
      getSurroundingRegion: () => Range(sheetIndex, r, c, rows, cols),
      getCell: (i, j) => Range(sheetIndex, r + i, c + j, 1, 1),
    });
    return range;
  }

  function Worksheet(index) {
    const sheet = sheets[index];
    const ws = loadable({
      get name() {
        return sheet.name;
      },
      get position() {
        return index;
      },
      visibility: "Visible",
      showGridlines: true,
      names: collection([]),
      shapes: collection([]),
      charts: collection([]),
      comments: collection([]),
      pivotTables: collection([]),
      notes: collection([]),
      pageLayout: { getPrintAreaOrNullObject: () => nullObject() },
      getRange(address) {
        const [a, b] = address.split("!").pop().split(":");
        const [r1, c1] = parseCell(a);
        const [r2, c2] = b ? parseCell(b) : [r1, c1];
        return Range(index, r1, c1, r2 - r1 + 1, c2 - c1 + 1);
      },
      getRangeByIndexes: (r, c, rows, cols) => Range(index, r, c, rows, cols),
      getUsedRangeOrNullObject() {
        let [r2, c2] = [-1, -1];
        for (const key of sheet.cells.keys()) {
          const [i, j] = key.split(",").map(Number);
          r2 = Math.max(r2, i);
          c2 = Math.max(c2, j);
        }
        return r2 < 0 ? nullObject() : Range(index, 0, 0, r2 + 1, c2 + 1);
      },
      activate() {
        book.active = index;
      },
    });
    ws.tables = collection(sheet.tables);
    ws.tables.add = (address, hasHeaders) => {
      const range = () => ws.getRange(address);
      const table = loadable({
        name: `Table${sheet.tables.length + 1}`,
        address,
        showHeaders: Boolean(hasHeaders),
        showTotals: false,
        style: "TableStyleMedium2",
        getRange: range,
        getDataBodyRange: range,
        getHeaderRowRange: range,
        columns: collection([]),
      });
      writes.push({ kind: "table", sheet: sheet.name, address, hasHeaders });
      sheet.tables.push(table);
      return table;
    };
    return ws;
  }

  function Workbook() {
    const worksheets = loadable({
      get items() {
        return sheets.map((_, i) => Worksheet(i));
      },
      getItem(name) {
        const i = sheets.findIndex((s) => s.name === name);
        if (i < 0) throw new Error(`ItemNotFound: ${name}`);
        return Worksheet(i);
      },
      getItemOrNullObject(name) {
        const i = sheets.findIndex((s) => s.name === name);
        return i < 0 ? nullObject() : Worksheet(i);
      },
      getActiveWorksheet: () => Worksheet(book.active),
    });
    const application = loadable({
      calculationMode: "Automatic",
      cultureInfo: loadable({ name: "en-US", datetimeFormat: loadable({ shortDatePattern: "M/d/yyyy" }) }),
    });
    return loadable({
      get name() {
        return book.name;
      },
      worksheets,
      names: collection([]),
      application,
      getSelectedRange: () => Range(book.active, book.selection[0], book.selection[1], 1, 1),
    });
  }

  function RequestContext() {
    this.workbook = Workbook();
    this.application = this.workbook.application;
    this.sync = async () => {};
  }

  const enumOf = (...names) => Object.fromEntries(names.map((n) => [n, n]));
  window.Excel = {
    RequestContext,
    run: async (callback) => callback(new RequestContext()),
    ShapeType: enumOf("image", "geometricShape", "group", "line"),
    GroupOption: enumOf("byRows", "byColumns"),
    ClearApplyTo: enumOf("all", "formats", "contents"),
    InsertShiftDirection: enumOf("down", "right"),
    DeleteShiftDirection: enumOf("up", "left"),
    SaveBehavior: enumOf("save", "prompt"),
    CalculationType: enumOf("recalculate", "full", "fullRebuild"),
    AggregationFunction: enumOf("sum", "count", "average"),
    CustomFunctionManager: { newObject: () => ({}), register: async () => {} },
  };

  const ready = Promise.resolve({ host: "Excel", platform: "PC" });
  window.Office = {
    onReady: (callback) => ready.then((info) => (callback ? callback(info) : info)),
    context: {
      platform: "PC",
      diagnostics: { version: "16.0.fake", platform: "PC" },
      requirements: {
        isSetSupported: (name, v) => name in supported && atMost(v || "1.1", supported[name]),
      },
      ui: { displayDialogAsync: () => {}, messageParent: () => {} },
    },
    actions: {
      associate: (name, fn) => {
        ribbon[name] = fn;
      },
    },
    addin: { showAsTaskpane: async () => {}, setStartupBehavior: async () => {} },
    auth: { getAccessToken: async () => "" },
    StartupBehavior: enumOf("load", "none"),
    EventType: enumOf("DialogMessageReceived", "DialogEventReceived"),
    AsyncResultStatus: enumOf("Succeeded", "Failed"),
  };

  // Custom functions: Excel's runtime calls each with one 2-D array per argument (null for an
  // omitted optional one) and an invocation object last.
  class CustomFunctionsError extends Error {
    constructor(code, message) {
      super(message || code);
      this.code = code;
    }
  }
  window.CustomFunctions = {
    associate: (id, fn) => {
      functions[id] = fn;
    },
    Error: CustomFunctionsError,
    ErrorCode: enumOf("invalidValue", "notAvailable", "divisionByZero", "invalidNumber", "nullReference", "invalidName", "invalidReference"),
  };

  // What a cell shows for a custom function's result: Excel's error values for error objects,
  // "#VALUE!" (with the message on hover) for a thrown CustomFunctions.Error.
  const ERRORS = { NotAvailable: "#N/A", Num: "#NUM!", Value: "#VALUE!", Div0: "#DIV/0!" };
  const shown = (v) => {
    if (v && typeof v === "object" && v.type === "Error") return ERRORS[v.errorType] || "#ERROR";
    return v;
  };
  window.__callCustomFunction = async (id, args, address = "Sheet1!B2") => {
    const invocation = { address, functionName: id, setResult() {}, onCanceled: null };
    try {
      const result = await functions[id](...args, invocation);
      return { raw: result, shows: Array.isArray(result) ? result.map((row) => row.map(shown)) : shown(result) };
    } catch (error) {
      return { error: error.code || "error", message: error.message, shows: "#VALUE!" };
    }
  };
})();
