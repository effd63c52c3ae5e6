//! `report.xlsx`: the cost model as a workbook a finance team can audit and change.
//!
//! - **Assumptions**: every input the run used (the rows of the PDF's assumptions section:
//!   scope, input, value, unit, basis, source, date, note). The value cells are what the other
//!   sheets refer to.
//! - **One sheet per option** of the recommended tier, and the runner-up's: the plan's
//!   quantities (units, units bought, instance-hours, busy units …) as numbers, every cost line
//!   a live formula of those quantities and the Assumptions cells (electricity price, PUE,
//!   discount rate, prices per hour, price per server …), then the cash flows by point of time
//!   (as [`crate::results::cashflow`]) and the net present cost. Changing an Assumptions cell
//!   moves every total that depends on it.
//! - **Summary**: each option's net present cost (live) beside `results.json`'s, the
//!   incremental NPV, the payback and the IRR of owning against renting by Excel's `IRR()` over
//!   the half-yearly incremental flows.
//!
//! What stays a number: the plan (fleet sizes, spares, hours, the hybrids' reserved bases), which
//! the simulator sized at the base assumptions; egress, priced month by month on the provider's
//! tiered schedule; and, after tax, the depreciation and sale gains. Every formula carries the
//! value tco-sim computed as its cached result, so a viewer that does not recalculate shows the
//! same numbers.

use std::collections::HashMap;

use rust_xlsxwriter::{
    DocProperties, ExcelDateTime, Format, FormatAlign, Formula, Workbook, Worksheet, XlsxError,
};

use crate::cost::OptionCost;
use crate::hardware::{DeploymentOption, UnitKind};
use crate::results::cashflow::{OptionCashFlow, option_cash_flow};
use crate::results::{RunResults, TierResult};
use crate::units::HOURS_PER_YEAR;

/// One assumption's value in another sheet: the Assumptions cell, if the run recorded it.
#[derive(Default)]
struct Refs {
    cells: HashMap<(String, String), String>,
    /// Test hook: an Assumptions value written in place of the run's (scope, field, value).
    values: HashMap<(String, String), f64>,
}

impl Refs {
    fn get(&self, scope: &str, field: &str) -> Option<String> {
        self.cells
            .get(&(scope.to_string(), field.to_string()))
            .cloned()
    }
    fn cost(&self, key: &str, fallback: f64) -> String {
        self.get("costs", key).unwrap_or_else(|| num(fallback))
    }
}

fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "0".into()
    }
}

/// A sheet name Excel accepts: at most 31 characters, none of `[]:*?/\`, unique.
fn sheet_name(base: &str, taken: &mut Vec<String>) -> String {
    let clean: String = base
        .chars()
        .map(|c| if "[]:*?/\\'".contains(c) { '-' } else { c })
        .collect();
    let mut name: String = clean.chars().take(31).collect();
    let mut n = 2;
    while taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) {
        let suffix = format!(" {n}");
        name = clean.chars().take(31 - suffix.len()).collect::<String>() + &suffix;
        n += 1;
    }
    taken.push(name.clone());
    name
}

/// Column letter(s) of a 0-based column.
fn col(c: u16) -> String {
    let mut c = c as u32 + 1;
    let mut s = String::new();
    while c > 0 {
        let r = (c - 1) % 26;
        s.insert(0, (b'A' + r as u8) as char);
        c = (c - 1) / 26;
    }
    s
}

/// `A1` reference of a 0-based (row, column).
fn at(row: u32, c: u16) -> String {
    format!("{}{}", col(c), row + 1)
}

/// Widest a column is made to fit its content \[px\]; longer text wraps in it.
const MAX_COLUMN_PX: u32 = 360;

/// Size every column to its content (at most `max_px`), and print the sheet landscape, one page
/// wide, so nothing is clipped at a cell's or the paper's edge. Called once the table cells are
/// written and before the titles and notes that run across columns (`note`), which would
/// otherwise widen the first column.
fn fit_and_print(ws: &mut Worksheet, max_px: u32) {
    ws.set_autofit_max_width(max_px);
    ws.autofit();
    ws.set_landscape();
    ws.set_print_fit_to_pages(1, 0);
}

/// Widest an option sheet's column is made \[px\]: its headers wrap to it.
const OPTION_COLUMN_PX: u32 = 150;
/// About how many characters of the default font a column `px` wide holds.
fn chars_in(px: u32) -> usize {
    (px as usize).saturating_sub(7) / 7
}

/// Set a wrapped header row as tall as its longest header needs at OPTION_COLUMN_PX (a
/// spreadsheet does not grow a row for wrapped text it loads).
fn header_height(ws: &mut Worksheet, row: u32, headers: &[&str]) -> Result<(), XlsxError> {
    let lines = headers
        .iter()
        .map(|h| wrap_chars(h, chars_in(OPTION_COLUMN_PX)).len())
        .max()
        .unwrap_or(1);
    ws.set_row_height(row, 15.0 * lines as f64)?;
    Ok(())
}

/// `text` broken at spaces into lines of at most `width` characters.
fn wrap_chars(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![];
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// A long note across columns 0..=`last_col` of `row`, wrapped at about `width` characters
/// (no more than those columns hold), the row as tall as its lines.
fn note(
    ws: &mut Worksheet,
    row: u32,
    last_col: u16,
    text: &str,
    width: usize,
    s: &Styles,
) -> Result<(), XlsxError> {
    let lines = wrap_chars(text, width);
    ws.merge_range(row, 0, row, last_col, &lines.join("\n"), &s.wrap)?;
    ws.set_row_height(row, 15.0 * lines.len() as f64 + 2.0)?;
    Ok(())
}

struct Styles {
    bold: Format,
    money: Format,
    money_bold: Format,
    factor: Format,
    qty: Format,
    wrap: Format,
    input: Format,
}

fn styles() -> Styles {
    Styles {
        bold: Format::new().set_bold(),
        money: Format::new().set_num_format("#,##0.00"),
        money_bold: Format::new().set_num_format("#,##0.00").set_bold(),
        factor: Format::new().set_num_format("0.000000"),
        qty: Format::new().set_num_format("#,##0.####"),
        wrap: Format::new().set_text_wrap().set_align(FormatAlign::Top),
        input: Format::new()
            .set_num_format("General")
            .set_background_color("#FFF2CC"),
    }
}

/// The unit an input is held in, for the Assumptions sheet.
fn unit_of(scope: &str, field: &str) -> String {
    if scope == "costs" {
        return crate::cost::inputs::COST_INPUTS
            .iter()
            .find(|c| c.key == field)
            .map_or("", |c| c.unit)
            .to_string();
    }
    if let Some(p) = crate::hardware::numbers::PROFILE_NUMBERS
        .iter()
        .find(|p| p.label == field)
    {
        return match (p.label.find('['), p.label.find(']')) {
            (Some(a), Some(b)) if b > a => p.label[a + 1..b].to_string(),
            _ => p.unit.to_string(),
        };
    }
    match field {
        "energy_usd_per_unit_hour" => "USD/unit-hour",
        "software_usd_per_unit_year" => "USD/unit-year",
        "porting_usd" => "USD",
        "price_change_per_year" | "max_utilization" => "fraction",
        _ => "",
    }
    .to_string()
}

fn assumptions_sheet(r: &RunResults, s: &Styles, refs: &mut Refs) -> Result<Worksheet, XlsxError> {
    let mut ws = Worksheet::new();
    ws.set_name("Assumptions")?;
    let head = [
        "Scope", "Input", "Value", "Unit", "Basis", "Source", "Date", "Note",
    ];
    for (c, h) in head.iter().enumerate() {
        ws.write_string_with_format(3, c as u16, *h, &s.bold)?;
    }
    for (i, input) in r.inputs.iter().enumerate() {
        let row = 4 + i as u32;
        let key = (input.scope.clone(), input.field.clone());
        let value = refs.values.get(&key).copied().unwrap_or(input.value);
        ws.write_string(row, 0, &input.scope)?;
        ws.write_string(row, 1, &input.field)?;
        ws.write_number_with_format(row, 2, value, &s.input)?;
        ws.write_string(row, 3, unit_of(&input.scope, &input.field))?;
        ws.write_string(
            row,
            4,
            if input.basis == crate::cite::Basis::Estimate {
                "ESTIMATE"
            } else {
                input.basis.label()
            },
        )?;
        let note_text = input.note.clone().unwrap_or_default();
        ws.write_string_with_format(row, 5, &input.source, &s.wrap)?;
        ws.write_string(row, 6, &input.date)?;
        ws.write_string_with_format(row, 7, &note_text, &s.wrap)?;
        // The row as tall as its longest wrapped text (a spreadsheet does not grow it on load).
        let lines = [&input.source, &note_text]
            .iter()
            .map(|t| wrap_chars(t, chars_in(MAX_COLUMN_PX) - 2).len())
            .max()
            .unwrap_or(1);
        if lines > 1 {
            ws.set_row_height(row, 15.0 * lines as f64)?;
        }
        refs.cells
            .entry(key)
            .or_insert_with(|| format!("Assumptions!$C${}", row + 1));
    }
    fit_and_print(&mut ws, MAX_COLUMN_PX);
    ws.write_string_with_format(
        0,
        0,
        format!(
            "Assumptions of {} (every input the run used)",
            r.scenario.name
        ),
        &s.bold,
    )?;
    note(
        &mut ws,
        1,
        7,
        "The yellow value cells feed every formula of the option sheets: change one and the totals \
         follow. The fleet sizes were planned at these values and do not change.",
        120,
        s,
    )?;
    ws.set_repeat_rows(3, 3)?;
    Ok(ws)
}

/// A cell to write: a number, or a formula with the value tco-sim computed.
enum Cell {
    N(f64),
    F(String, f64),
}

fn put(ws: &mut Worksheet, row: u32, c: u16, cell: Cell, f: &Format) -> Result<(), XlsxError> {
    match cell {
        Cell::N(x) => {
            ws.write_number_with_format(row, c, if x.is_finite() { x } else { 0.0 }, f)?;
        }
        Cell::F(text, v) => {
            let v = if v.is_finite() { v } else { 0.0 };
            ws.write_formula_with_format(row, c, Formula::new(text).set_result(num(v)), f)?;
        }
    }
    Ok(())
}

/// The cells of one option's sheet a Summary refers to.
struct OptionSheet {
    name: String,
    tier: String,
    option: DeploymentOption,
    flows: OptionCashFlow,
    /// First row (0-based) of the cash-flow block; its lump and through-year columns.
    cash_first_row: u32,
    npc_cell: String,
    npc_usd: f64,
}

// Columns of the cost-lines block.
const Y: u16 = 0; // year
const UNITS: u16 = 1;
const ADDED: u16 = 2;
const HOURS: u16 = 3;
const RUN_H: u16 = 4; // running unit-hours (licences)
const STOR_H: u16 = 5; // instance-hours billed for storage
const BUSY: u16 = 6; // busy units, yearly average (on-prem energy)
const INST_IDX: u16 = 7; // installed, at the year-1 price per server
const SOLD_IDX: u16 = 8; // sold, at the year-1 price per server
const CAPEX: u16 = 9;
const MAINT: u16 = 10;
const ENERGY: u16 = 11;
const SPACE: u16 = 12;
const STAFF: u16 = 13;
const NETWORK: u16 = 14;
const CLOUD: u16 = 15;
const PREPAID: u16 = 16;
const STORAGE: u16 = 17;
const EGRESS: u16 = 18;
const SOFTWARE: u16 = 19;
const SUPPORT: u16 = 20;
const ENGINEERING: u16 = 21;
const RESALE: u16 = 22;
const START: u16 = 23;
const RUNNING: u16 = 24;
const TOTAL: u16 = 25;

const LINE_HEADERS: [&str; 26] = [
    "Year",
    "Units",
    "Units bought / committed",
    "Instance-hours",
    "Running unit-hours",
    "Instance-hours with storage",
    "Busy units (yearly mean)",
    "Installed, in servers at the year-1 price",
    "Sold, in servers at the year-1 price",
    "Capex",
    "Maintenance",
    "Energy",
    "Space",
    "Staff",
    "Network",
    "Cloud instances",
    "Prepaid reservations",
    "Storage",
    "Egress (tiered schedule: value)",
    "Software",
    "Support",
    "Engineering",
    "Resale of retired units",
    "Start of year",
    "Running",
    "Total",
];

// Columns of the cash-flow block.
const CF_HEADERS: [&str; 18] = [
    "Row (0 = start of year 1; y = year y and its end)",
    "Capex",
    "Prepaid",
    "Engineering",
    "Resale (retired)",
    "Resale (owned at the horizon)",
    "Running",
    "Owed after the horizon",
    "Tax at the point",
    "Tax through the year",
    "Net at the point",
    "Net through the year",
    "Nominal",
    "Factor at the point",
    "Factor mid-year",
    "Discounted",
    "Cumulative",
    "Cumulative discounted",
];

#[allow(clippy::too_many_lines)]
fn option_sheet(
    r: &RunResults,
    t: &TierResult,
    o: &OptionCost,
    name: &str,
    s: &Styles,
    refs: &Refs,
) -> Result<(Worksheet, OptionSheet), XlsxError> {
    let c = &r.scenario.costs;
    let mut ws = Worksheet::new();
    ws.set_name(name)?;
    let opt = o.option;
    let scope = t.profile.as_str();
    let profile_or = |field: &str, fallback: f64| refs.get(scope, field).unwrap_or(num(fallback));
    let price_field = match opt {
        DeploymentOption::OnPrem => "price.purchase_usd",
        DeploymentOption::OnDemand => "price.on_demand_usd_per_hour",
        DeploymentOption::Reserved1y | DeploymentOption::Hybrid1y => {
            "price.reserved_1y_usd_per_hour"
        }
        DeploymentOption::Reserved3y | DeploymentOption::Hybrid3y => {
            "price.reserved_3y_usd_per_hour"
        }
        DeploymentOption::Spot => "price.spot_usd_per_hour",
    };
    let price_value = r
        .inputs
        .iter()
        .find(|i| i.scope == scope && i.field == price_field)
        .map_or(0.0, |i| i.value);
    let p = profile_or(price_field, 0.0);
    let p_od = profile_or("price.on_demand_usd_per_hour", 0.0);
    let g = refs
        .get(&t.name, "price_change_per_year")
        .or_else(|| refs.get(scope, "price.change_per_year"))
        .unwrap_or_else(|| "0".into());
    let idle = profile_or("power.idle_w", 0.0);
    let peak = profile_or("power.peak_w", 0.0);
    let chips = profile_or("chips", 1.0);
    let rate = refs.cost("discount_rate", c.discount_rate.value);
    let tax = refs.cost("tax_rate", c.tax_rate.value);
    let h = o.yearly.len() as u32;

    // Reservation parameters: the upfront share and the discount it buys (linear from none
    // through Partial Upfront at 0.5 to All Upfront at 1, as the cost model).
    let term = opt.term_years().unwrap_or(1);
    let (partial, all) = if term >= 3 {
        (
            refs.cost(
                "reserved_3y_partial_upfront_discount",
                c.reserved_3y_partial_upfront_discount.value,
            ),
            refs.cost(
                "reserved_3y_all_upfront_discount",
                c.reserved_3y_all_upfront_discount.value,
            ),
        )
    } else {
        (
            refs.cost(
                "reserved_1y_partial_upfront_discount",
                c.reserved_1y_partial_upfront_discount.value,
            ),
            refs.cost(
                "reserved_1y_all_upfront_discount",
                c.reserved_1y_all_upfront_discount.value,
            ),
        )
    };
    let share_v = c.reserved_upfront_share.value.clamp(0.0, 1.0);
    let partial_v = if term >= 3 {
        c.reserved_3y_partial_upfront_discount.value
    } else {
        c.reserved_1y_partial_upfront_discount.value
    };
    let all_v = if term >= 3 {
        c.reserved_3y_all_upfront_discount.value
    } else {
        c.reserved_1y_all_upfront_discount.value
    };
    let disc_v = if share_v <= 0.5 {
        share_v / 0.5 * partial_v
    } else {
        partial_v + (share_v - 0.5) / 0.5 * (all_v - partial_v)
    };
    let reserved = matches!(
        opt,
        DeploymentOption::Reserved1y
            | DeploymentOption::Reserved3y
            | DeploymentOption::Hybrid1y
            | DeploymentOption::Hybrid3y
    );
    ws.write_string(1, 0, "Upfront share")?;
    put(
        &mut ws,
        1,
        1,
        Cell::F(
            format!(
                "MIN(1,MAX(0,{}))",
                refs.cost("reserved_upfront_share", share_v)
            ),
            share_v,
        ),
        &s.factor,
    )?;
    ws.write_string(1, 2, "Upfront discount")?;
    put(
        &mut ws,
        1,
        3,
        Cell::F(
            format!("IF(B2<=0.5,B2/0.5*{partial},{partial}+(B2-0.5)/0.5*({all}-{partial}))"),
            disc_v,
        ),
        &s.factor,
    )?;
    let (u, d) = ("$B$2", "$D$2");
    // Owned at the horizon, in servers at the year-1 price (at market): resale = price × this.
    let per_server = |x: f64| {
        if price_value > 0.0 {
            x / price_value
        } else {
            0.0
        }
    };
    ws.write_string_with_format(
        1,
        4,
        "Owned at the horizon, in servers at the year-1 price",
        &s.wrap,
    )?;
    put(
        &mut ws,
        1,
        5,
        Cell::N(per_server(o.resale_value_usd)),
        &s.qty,
    )?;
    let held = "$F$2";

    for (i, hd) in LINE_HEADERS.iter().enumerate() {
        ws.write_string_with_format(4, i as u16, *hd, &s.wrap)?;
    }
    header_height(&mut ws, 4, &LINE_HEADERS)?;
    let first = 5u32;
    let row_of = |year: u32| first + year - 1;
    // The commitments live in year `year` (1-based, may pass the horizon), each lot at the
    // price of the year it was bought: Σ bought_s · (1 + g)^(s − 1).
    let live = |year: u32| -> (String, f64) {
        let terms: Vec<(String, f64)> = (1..=h)
            .filter(|&s0| s0 <= year && year < s0 + term)
            .filter(|&s0| o.yearly[(s0 - 1) as usize].units_added > 0)
            .map(|s0| {
                let n = o.yearly[(s0 - 1) as usize].units_added as f64;
                let gv = r
                    .inputs
                    .iter()
                    .find(|i| {
                        (i.scope == t.name && i.field == "price_change_per_year")
                            || (i.scope == scope && i.field == "price.change_per_year")
                    })
                    .map_or(0.0, |i| i.value);
                (
                    format!("{}*(1+{g})^{}", at(row_of(s0), ADDED), s0 - 1),
                    n * (1.0 + gv).powi(s0 as i32 - 1),
                )
            })
            .collect();
        if terms.is_empty() {
            ("0".into(), 0.0)
        } else {
            (
                format!(
                    "({})",
                    terms
                        .iter()
                        .map(|t| t.0.clone())
                        .collect::<Vec<_>>()
                        .join("+")
                ),
                terms.iter().map(|t| t.1).sum(),
            )
        }
    };
    let licence = if let Some(x) = refs.get(&t.name, "software_usd_per_unit_year") {
        x
    } else if t.kind == UnitKind::Gpu {
        format!(
            "{}*{chips}",
            refs.cost(
                "software_usd_per_gpu_year",
                c.software_usd_per_gpu_year.value
            )
        )
    } else {
        "0".into()
    };
    let override_cell = refs.get(&t.name, "energy_usd_per_unit_hour");
    for (i, y) in o.yearly.iter().enumerate() {
        let row = row_of(y.year);
        let rr = row + 1; // the 1-based row in formulas
        let fleet = t.capacity.get(i).map(|cy| &cy.fleet);
        let fleet_units = fleet.map_or(0, |f| f.units);
        let util = fleet.map_or(0.0, |f| f.utilization.clamp(0.0, 1.0));
        let running_hours = match opt {
            DeploymentOption::OnPrem => y.units as f64 * HOURS_PER_YEAR,
            DeploymentOption::OnDemand | DeploymentOption::Spot => y.instance_hours,
            _ => y.units.min(fleet_units) as f64 * HOURS_PER_YEAR + y.instance_hours,
        };
        let storage_hours = match opt {
            DeploymentOption::OnDemand | DeploymentOption::Spot => y.instance_hours,
            DeploymentOption::OnPrem => 0.0,
            _ => y.units as f64 * HOURS_PER_YEAR + y.instance_hours,
        };
        let busy = fleet_units.min(y.units) as f64 * util;
        let cells: Vec<(u16, Cell, &Format)> = vec![
            (Y, Cell::N(y.year as f64), &s.qty),
            (UNITS, Cell::N(y.units as f64), &s.qty),
            (ADDED, Cell::N(y.units_added as f64), &s.qty),
            (HOURS, Cell::N(y.instance_hours), &s.qty),
            (RUN_H, Cell::N(running_hours), &s.qty),
            (STOR_H, Cell::N(storage_hours), &s.qty),
            (BUSY, Cell::N(busy), &s.qty),
            (
                INST_IDX,
                Cell::N(per_server(y.installed_purchase_usd)),
                &s.qty,
            ),
            (SOLD_IDX, Cell::N(per_server(y.resale_usd)), &s.qty),
        ];
        for (cc, cell, f) in cells {
            put(&mut ws, row, cc, cell, f)?;
        }
        let a = |cc: u16| format!("{}{rr}", col(cc));
        let yr = a(Y);
        let on_prem = opt == DeploymentOption::OnPrem;
        let zero = |v: f64| Cell::N(v);
        let capex = if on_prem {
            Cell::F(
                format!(
                    "{}*{p}*(1+{})^({yr}-1)*(1+{})",
                    a(ADDED),
                    refs.cost(
                        "hardware_price_change_per_year",
                        c.hardware_price_change_per_year.value
                    ),
                    refs.cost("install_share_of_capex", c.install_share_of_capex.value)
                ),
                y.capex_usd,
            )
        } else {
            zero(y.capex_usd)
        };
        let maint = if on_prem {
            Cell::F(
                format!(
                    "{}*{p}*{}",
                    a(INST_IDX),
                    refs.cost(
                        "maintenance_share_per_year",
                        c.maintenance_share_per_year.value
                    )
                ),
                y.maintenance_usd,
            )
        } else {
            zero(y.maintenance_usd)
        };
        let escalation = format!(
            "(1+{})^({yr}-1)",
            refs.cost(
                "electricity_price_change_per_year",
                c.electricity_price_change_per_year.value
            )
        );
        let energy = match (on_prem, &override_cell) {
            (false, _) => zero(y.energy_usd),
            (true, Some(ovr)) => Cell::F(
                format!("{}*8760*{ovr}*{escalation}", a(UNITS)),
                y.energy_usd,
            ),
            (true, None) => Cell::F(
                format!(
                    "8760*({u_}*{idle}/1000+{b}*({peak}-{idle})/1000)*{}*{}*{escalation}",
                    refs.cost("pue", c.pue.value),
                    refs.cost("electricity_usd_per_kwh", c.electricity_usd_per_kwh.value),
                    u_ = a(UNITS),
                    b = a(BUSY),
                ),
                y.energy_usd,
            ),
        };
        let space = if on_prem {
            Cell::F(
                format!(
                    "{}*{peak}/1000*{}*12",
                    a(UNITS),
                    refs.cost(
                        "colocation_usd_per_kw_month",
                        c.colocation_usd_per_kw_month.value
                    )
                ),
                y.space_usd,
            )
        } else {
            zero(y.space_usd)
        };
        let staff = if on_prem {
            Cell::F(
                format!(
                    "{}/{}*{}",
                    a(UNITS),
                    refs.cost("units_per_admin", c.units_per_admin.value),
                    refs.cost("admin_cost_usd_per_year", c.admin_cost_usd_per_year.value)
                ),
                y.staff_usd,
            )
        } else {
            zero(y.staff_usd)
        };
        let network = if on_prem {
            Cell::F(
                format!(
                    "{}*{}",
                    a(UNITS),
                    refs.cost(
                        "network_usd_per_unit_year",
                        c.network_usd_per_unit_year.value
                    )
                ),
                y.network_usd,
            )
        } else {
            zero(y.network_usd)
        };
        let trend = format!("(1+{g})^({yr}-1)");
        let (lots, _) = live(y.year);
        let cloud = match opt {
            DeploymentOption::OnPrem => zero(y.cloud_usd),
            DeploymentOption::OnDemand => Cell::F(format!("{}*{p}*{trend}", a(HOURS)), y.cloud_usd),
            DeploymentOption::Spot => Cell::F(
                format!(
                    "{}*{p}*{trend}*(1+{})",
                    a(HOURS),
                    refs.cost(
                        "spot_interruption_overhead",
                        c.spot_interruption_overhead.value
                    )
                ),
                y.cloud_usd,
            ),
            DeploymentOption::Reserved1y | DeploymentOption::Reserved3y => {
                Cell::F(format!("(1-{u})*(1-{d})*8760*{p}*{lots}"), y.cloud_usd)
            }
            DeploymentOption::Hybrid1y | DeploymentOption::Hybrid3y => Cell::F(
                format!(
                    "(1-{u})*(1-{d})*8760*{p}*{lots}+{}*{p_od}*{trend}",
                    a(HOURS)
                ),
                y.cloud_usd,
            ),
        };
        let prepaid = if reserved {
            Cell::F(
                format!("{u}*(1-{d})*8760*{term}*{p}*{}*{trend}", a(ADDED)),
                y.prepaid_usd,
            )
        } else {
            zero(y.prepaid_usd)
        };
        let cloud_opt = opt.is_cloud();
        let storage = if cloud_opt {
            Cell::F(
                format!(
                    "{}*{}*{}*12/8760",
                    a(STOR_H),
                    refs.cost(
                        "cloud_storage_gb_per_unit",
                        c.cloud_storage_gb_per_unit.value
                    ),
                    refs.cost(
                        "cloud_storage_usd_per_gb_month",
                        c.cloud_storage_usd_per_gb_month.value
                    )
                ),
                y.storage_usd,
            )
        } else {
            zero(y.storage_usd)
        };
        let software = Cell::F(format!("{}/8760*{licence}", a(RUN_H)), y.software_usd);
        let support = if cloud_opt {
            Cell::F(
                format!(
                    "{}*({}+{}+{}+{})",
                    refs.cost("cloud_support_share", c.cloud_support_share.value),
                    a(CLOUD),
                    a(PREPAID),
                    a(STORAGE),
                    a(EGRESS)
                ),
                y.support_usd,
            )
        } else {
            zero(y.support_usd)
        };
        let engineering = match (i, refs.get(&t.name, "porting_usd")) {
            (0, Some(x)) => Cell::F(x, y.engineering_usd),
            _ => zero(y.engineering_usd),
        };
        let resale = if on_prem {
            Cell::F(format!("{}*{p}", a(SOLD_IDX)), y.resale_usd)
        } else {
            zero(y.resale_usd)
        };
        let lines = vec![
            (CAPEX, capex),
            (MAINT, maint),
            (ENERGY, energy),
            (SPACE, space),
            (STAFF, staff),
            (NETWORK, network),
            (CLOUD, cloud),
            (PREPAID, prepaid),
            (STORAGE, storage),
            (EGRESS, Cell::N(y.egress_usd)),
            (SOFTWARE, software),
            (SUPPORT, support),
            (ENGINEERING, engineering),
            (RESALE, resale),
            (
                START,
                Cell::F(
                    format!(
                        "{}+{}+{}-{}",
                        a(CAPEX),
                        a(PREPAID),
                        a(ENGINEERING),
                        a(RESALE)
                    ),
                    y.start_of_year_usd(),
                ),
            ),
            (
                RUNNING,
                Cell::F(
                    format!(
                        "{}+{}+{}+{}+{}+{}+{}+{}+{}+{}",
                        a(MAINT),
                        a(ENERGY),
                        a(SPACE),
                        a(STAFF),
                        a(CLOUD),
                        a(STORAGE),
                        a(EGRESS),
                        a(SOFTWARE),
                        a(NETWORK),
                        a(SUPPORT)
                    ),
                    y.running_usd(),
                ),
            ),
            (
                TOTAL,
                Cell::F(format!("{}+{}", a(START), a(RUNNING)), y.total_usd),
            ),
        ];
        for (cc, cell) in lines {
            put(&mut ws, row, cc, cell, &s.money)?;
        }
    }

    // The cash flows by point of time, as results::cashflow.
    let flows = option_cash_flow(&t.name, o, c);
    let head_row = first + h + 1;
    for (i, hd) in CF_HEADERS.iter().enumerate() {
        ws.write_string_with_format(head_row + 1, i as u16, *hd, &s.wrap)?;
    }
    header_height(&mut ws, head_row + 1, &CF_HEADERS)?;
    let cf_first = head_row + 2;
    let cf_last = cf_first + flows.rows.len() as u32 - 1;
    for (k, fr) in flows.rows.iter().enumerate() {
        let row = cf_first + k as u32;
        let rr = row + 1;
        let year = fr.year;
        let b = |cc: u16| format!("{}{rr}", col(cc));
        // Year `year + 1`'s start-of-year lines, and year `year`'s running costs.
        let next = |cc: u16, v: f64| {
            if year < h {
                Cell::F(at(row_of(year + 1), cc), v)
            } else {
                Cell::N(0.0)
            }
        };
        let residual = if year == h {
            Cell::F(format!("{p}*{held}"), fr.residual_usd)
        } else {
            Cell::N(0.0)
        };
        let running = if year >= 1 && year <= h {
            Cell::F(at(row_of(year), RUNNING), fr.running_usd)
        } else {
            Cell::N(0.0)
        };
        let owed = if year > h && reserved {
            let (lots, _) = live(year);
            Cell::F(format!("(1-{u})*(1-{d})*8760*{p}*{lots}"), fr.owed_usd)
        } else {
            Cell::N(fr.owed_usd)
        };
        // After tax: the gains and depreciation are numbers (tco-sim's), the rest formulas.
        let gain = o.yearly.get(year as usize).map_or(0.0, |y| y.sale_gain_usd)
            + if year == h {
                o.taxable_gain_at_end_usd
            } else {
                0.0
            };
        let dep = (year as usize)
            .checked_sub(1)
            .and_then(|i| o.yearly.get(i))
            .map_or(0.0, |y| y.tax_depreciation_usd);
        let tax_point = Cell::F(
            format!("IF({tax}>0,{tax}*({}-{}-{}),0)", num(gain), b(2), b(3)),
            fr.tax_at_point_usd,
        );
        let tax_running = Cell::F(
            format!("IF({tax}>0,-{tax}*({}+{}+{}),0)", b(6), num(dep), b(7)),
            fr.tax_running_usd,
        );
        let cells: Vec<(u16, Cell, &Format)> = vec![
            (0, Cell::N(year as f64), &s.qty),
            (1, next(CAPEX, fr.capex_usd), &s.money),
            (2, next(PREPAID, fr.prepaid_usd), &s.money),
            (3, next(ENGINEERING, fr.engineering_usd), &s.money),
            (4, next(RESALE, fr.resale_usd), &s.money),
            (5, residual, &s.money),
            (6, running, &s.money),
            (7, owed, &s.money),
            (8, tax_point, &s.money),
            (9, tax_running, &s.money),
            (
                10,
                Cell::F(
                    format!("{}+{}+{}-{}-{}+{}", b(1), b(2), b(3), b(4), b(5), b(8)),
                    fr.lump_usd,
                ),
                &s.money,
            ),
            (
                11,
                Cell::F(format!("{}+{}+{}", b(6), b(7), b(9)), fr.through_year_usd),
                &s.money,
            ),
            (
                12,
                Cell::F(format!("{}+{}", b(10), b(11)), fr.nominal_usd),
                &s.money,
            ),
            (
                13,
                Cell::F(format!("(1+{rate})^(-{})", b(0)), fr.point_factor),
                &s.factor,
            ),
            (
                14,
                Cell::F(
                    format!("IF({y}=0,0,(1+{rate})^(-({y}-0.5)))", y = b(0)),
                    fr.mid_year_factor,
                ),
                &s.factor,
            ),
            (
                15,
                Cell::F(
                    format!("{}*{}+{}*{}", b(10), b(13), b(11), b(14)),
                    fr.discounted_usd,
                ),
                &s.money,
            ),
            (
                16,
                Cell::F(
                    format!("SUM({}${}:{})", col(12), cf_first + 1, b(12)),
                    fr.cumulative_usd,
                ),
                &s.money,
            ),
            (
                17,
                Cell::F(
                    format!("SUM({}${}:{})", col(15), cf_first + 1, b(15)),
                    fr.cumulative_discounted_usd,
                ),
                &s.money,
            ),
        ];
        for (cc, cell, f) in cells {
            put(&mut ws, row, cc, cell, f)?;
        }
    }
    let total_row = cf_last + 1;
    ws.write_string_with_format(total_row, 0, "Net present cost", &s.bold)?;
    put(
        &mut ws,
        total_row,
        12,
        Cell::F(
            format!("SUM({}:{})", at(cf_first, 12), at(cf_last, 12)),
            flows.nominal_usd,
        ),
        &s.money_bold,
    )?;
    put(
        &mut ws,
        total_row,
        15,
        Cell::F(
            format!("SUM({}:{})", at(cf_first, 15), at(cf_last, 15)),
            flows.net_present_cost_usd,
        ),
        &s.money_bold,
    )?;
    // Column headers wrap at OPTION_COLUMN_PX; 26 columns print across pages, landscape,
    // with the year column and the headers repeated (one page wide would be unreadable).
    ws.set_autofit_max_width(OPTION_COLUMN_PX);
    ws.autofit();
    ws.set_landscape();
    ws.set_repeat_columns(0, 0)?;
    ws.set_repeat_rows(4, 4)?;
    ws.write_string_with_format(
        0,
        0,
        format!("{} · {} — cost lines and cash flows", t.name, opt),
        &s.bold,
    )?;
    note(
        &mut ws,
        2,
        TOTAL,
        "Quantities (columns B–I) are the plan, sized at the base assumptions; the cost lines \
         (J–Z) are formulas of them and of the Assumptions sheet.",
        150,
        s,
    )?;
    ws.write_string_with_format(
        head_row,
        0,
        "Cash flows (costs positive, cash received negative)",
        &s.bold,
    )?;
    ws.set_freeze_panes(5, 1)?;
    let npc_cell = format!("'{}'!${}${}", name, col(15), total_row + 1);
    Ok((
        ws,
        OptionSheet {
            name: name.to_string(),
            tier: t.name.clone(),
            option: opt,
            npc_usd: flows.net_present_cost_usd,
            flows,
            cash_first_row: cf_first,
            npc_cell,
        },
    ))
}

/// The workbook's bytes. `date` is the document's creation date (SOURCE_DATE_EPOCH, as the PDF).
///
/// # Errors
/// An [`XlsxError`] when the workbook cannot be put together (a bug: every name and cell is
/// made here).
pub fn render(r: &RunResults, date: &crate::report::pdf::ReportDate) -> Result<Vec<u8>, XlsxError> {
    render_with(r, date, &[])
}

/// As [`render`], with some Assumptions values replaced — (scope, input, value) — and every
/// cached result left at the run's values: a workbook as a user who edited those cells leaves
/// it, for the recalculation tests.
///
/// # Errors
/// As [`render`].
pub fn render_with(
    r: &RunResults,
    date: &crate::report::pdf::ReportDate,
    edits: &[(&str, &str, f64)],
) -> Result<Vec<u8>, XlsxError> {
    let s = styles();
    let mut refs = Refs::default();
    for (scope, field, v) in edits {
        refs.values
            .insert((scope.to_string(), field.to_string()), *v);
    }
    let assumptions = assumptions_sheet(r, &s, &mut refs)?;
    // The recommended tier's options, then the runner-up if it is of another tier.
    let mut chosen: Vec<(&TierResult, &OptionCost, &str)> = vec![];
    let rec = r.recommendation.as_ref();
    if let Some(rec) = rec {
        if let Some(t) = r.tiers.iter().find(|t| t.name == rec.best.tier) {
            for o in &t.options {
                let role = if o.option == rec.best.option {
                    "recommended"
                } else if rec
                    .runner_up
                    .as_ref()
                    .is_some_and(|u| u.tier == t.name && u.option == o.option)
                {
                    "runner-up"
                } else {
                    "same tier"
                };
                chosen.push((t, o, role));
            }
        }
        if let Some(u) = &rec.runner_up
            && u.tier != rec.best.tier
            && let Some(t) = r.tiers.iter().find(|t| t.name == u.tier)
            && let Some(o) = t.options.iter().find(|o| o.option == u.option)
        {
            chosen.push((t, o, "runner-up"));
        }
    }
    let mut taken = vec!["Summary".to_string(), "Assumptions".to_string()];
    let mut sheets = vec![];
    for (t, o, role) in &chosen {
        let name = sheet_name(&format!("{} {}", t.name, o.option), &mut taken);
        let (ws, info) = option_sheet(r, t, o, &name, &s, &refs)?;
        sheets.push((ws, info, *role));
    }
    let summary = summary_sheet(r, &s, &sheets)?;

    let mut wb = Workbook::new();
    let created = ExcelDateTime::from_ymd(date.year, date.month, date.day)?.and_hms(
        u16::from(date.hour),
        date.minute,
        date.second,
    )?;
    wb.set_properties(
        &DocProperties::new()
            .set_title(format!("tco-sim cash flows: {}", r.scenario.name))
            .set_author("tco-sim")
            .set_creation_datetime(&created),
    );
    wb.push_worksheet(summary);
    wb.push_worksheet(assumptions);
    for (ws, _, _) in sheets {
        wb.push_worksheet(ws);
    }
    wb.save_to_buffer()
}

fn summary_sheet(
    r: &RunResults,
    s: &Styles,
    sheets: &[(Worksheet, OptionSheet, &str)],
) -> Result<Worksheet, XlsxError> {
    let mut ws = Worksheet::new();
    ws.set_name("Summary")?;
    summary_body(&mut ws, r, s, sheets)?;
    fit_and_print(&mut ws, MAX_COLUMN_PX);
    ws.write_string_with_format(
        0,
        0,
        format!("{}: net present cost by option", r.scenario.name),
        &s.bold,
    )?;
    note(
        &mut ws,
        1,
        6,
        &format!(
            "Live totals of the option sheets beside tco-sim's results.json. {}",
            r.recommendation
                .as_ref()
                .map_or("", |x| x.sentence.as_str())
        ),
        110,
        s,
    )?;
    Ok(ws)
}

/// Every tier and option of the run, below the option sheets' rows from `row`: the feasible
/// options with results.json's net present cost and whether they meet the contract, and the
/// infeasible tiers marked so, with the reason. Returns the next free row.
fn all_tiers(
    ws: &mut Worksheet,
    r: &RunResults,
    s: &Styles,
    mut row: u32,
) -> Result<u32, XlsxError> {
    ws.write_string_with_format(
        row,
        0,
        "Every tier and option (from results.json; live totals only on the option sheets)",
        &s.bold,
    )?;
    row += 1;
    for (i, h) in ["Tier", "Option", "Status", "Why / role", "", "results.json"]
        .iter()
        .enumerate()
    {
        if !h.is_empty() {
            ws.write_string_with_format(row, i as u16, *h, &s.bold)?;
        }
    }
    row += 1;
    let rec = r.recommendation.as_ref();
    for t in &r.tiers {
        if let Some(why) = &t.infeasible {
            ws.write_string(row, 0, &t.name)?;
            ws.write_string(row, 1, crate::format::MISSING)?;
            ws.write_string(row, 2, "infeasible")?;
            ws.write_string_with_format(row, 3, why, &s.wrap)?;
            row += 1;
            continue;
        }
        for o in &t.options {
            let role = match rec {
                Some(x) if x.best.tier == t.name && x.best.option == o.option => "recommended",
                Some(x)
                    if x.runner_up
                        .as_ref()
                        .is_some_and(|u| u.tier == t.name && u.option == o.option) =>
                {
                    "runner-up"
                }
                _ => "",
            };
            ws.write_string(row, 0, &t.name)?;
            ws.write_string(row, 1, o.option.to_string())?;
            ws.write_string(
                row,
                2,
                if t.meets_slo() {
                    "meets the contract"
                } else {
                    "misses the contract"
                },
            )?;
            if !role.is_empty() {
                ws.write_string(row, 3, role)?;
            }
            put(ws, row, 5, Cell::N(o.net_present_cost_usd), &s.money)?;
            row += 1;
        }
    }
    Ok(row)
}

fn summary_body(
    ws: &mut Worksheet,
    r: &RunResults,
    s: &Styles,
    sheets: &[(Worksheet, OptionSheet, &str)],
) -> Result<(), XlsxError> {
    for (i, h) in [
        "Sheet",
        "Tier",
        "Option",
        "Role",
        "Net present cost (live)",
        "results.json",
        "Difference",
    ]
    .iter()
    .enumerate()
    {
        ws.write_string_with_format(3, i as u16, *h, &s.bold)?;
    }
    let mut npc_row: HashMap<(String, DeploymentOption), u32> = HashMap::new();
    for (k, (_, info, role)) in sheets.iter().enumerate() {
        let row = 4 + k as u32;
        ws.write_string(row, 0, &info.name)?;
        ws.write_string(row, 1, &info.tier)?;
        ws.write_string(row, 2, info.option.to_string())?;
        ws.write_string(row, 3, *role)?;
        put(
            ws,
            row,
            4,
            Cell::F(info.npc_cell.clone(), info.npc_usd),
            &s.money,
        )?;
        let json = r
            .tiers
            .iter()
            .find(|t| t.name == info.tier)
            .and_then(|t| t.options.iter().find(|o| o.option == info.option))
            .map_or(0.0, |o| o.net_present_cost_usd);
        put(ws, row, 5, Cell::N(json), &s.money)?;
        put(
            ws,
            row,
            6,
            Cell::F(format!("E{}-F{}", row + 1, row + 1), info.npc_usd - json),
            &s.money,
        )?;
        npc_row.insert((info.tier.clone(), info.option), row);
    }
    let mut row = all_tiers(ws, r, s, 5 + sheets.len() as u32)? + 1;
    let Some(cf) = &r.cash_flow else {
        return Ok(());
    };
    let find = |tier: &str, o: DeploymentOption| npc_row.get(&(tier.to_string(), o)).copied();
    let best = find(&cf.recommended.tier, cf.recommended.option);
    let runner = cf.runner_up.as_ref().and_then(|u| find(&u.tier, u.option));
    ws.write_string_with_format(row, 0, "Incremental NPV (runner-up − recommended)", &s.bold)?;
    match (best, runner, cf.incremental_npv_usd) {
        (Some(b), Some(u), Some(v)) => put(
            ws,
            row,
            4,
            Cell::F(format!("E{}-E{}", u + 1, b + 1), v),
            &s.money_bold,
        )?,
        _ => {
            ws.write_string(row, 4, "n/a: there is no runner-up")?;
        }
    }
    row += 1;
    let years = |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("{v:.2} years"));
    ws.write_string_with_format(row, 0, "Payback of owning against renting", &s.bold)?;
    ws.write_string(
        row,
        4,
        format!(
            "{} (discounted: {}) — {}",
            years(cf.payback_years),
            years(cf.discounted_payback_years),
            cf.payback_note
        ),
    )?;
    row += 1;
    ws.write_string_with_format(row, 0, "IRR of owning against renting (a year)", &s.bold)?;
    let irr_row = row;
    row += 2;
    // The incremental flows, half year by half year, from the option sheets' cells.
    let own = sheets
        .iter()
        .find(|(_, i, _)| cf.own.as_deref() == Some(&format!("{} {}", i.tier, i.option)));
    let rent = sheets
        .iter()
        .find(|(_, i, _)| cf.rent.as_deref() == Some(&format!("{} {}", i.tier, i.option)));
    let (Some((_, own, _)), Some((_, rent, _))) = (own, rent) else {
        ws.write_string(irr_row, 4, format!("n/a: {}", cf.irr_note))?;
        return Ok(());
    };
    ws.write_string_with_format(
        row,
        0,
        format!(
            "Incremental flows: {} − {} (positive: owning saves)",
            rent.tier.clone() + " " + &rent.option.to_string(),
            own.tier.clone() + " " + &own.option.to_string()
        ),
        &s.bold,
    )?;
    row += 1;
    for (i, h) in [
        "Years from today",
        "Owning pays",
        "Renting pays",
        "Saving of owning",
    ]
    .iter()
    .enumerate()
    {
        ws.write_string_with_format(row, i as u16, *h, &s.bold)?;
    }
    row += 1;
    let flow_first = row;
    let cell_of =
        |info: &OptionSheet, p: &crate::results::cashflow::IncrementalPoint| -> (String, f64) {
            let y = p.t_years.ceil() as u32;
            let lump = p.t_years.fract() == 0.0;
            match info.flows.rows.get(y as usize) {
                Some(fr) => (
                    format!(
                        "'{}'!{}",
                        info.name,
                        at(info.cash_first_row + y, if lump { 10 } else { 11 })
                    ),
                    if lump {
                        fr.lump_usd
                    } else {
                        fr.through_year_usd
                    },
                ),
                None => ("0".into(), 0.0),
            }
        };
    for p in &cf.incremental {
        let (oc, ov) = cell_of(own, p);
        let (rc, rv) = cell_of(rent, p);
        put(ws, row, 0, Cell::N(p.t_years), &s.qty)?;
        put(ws, row, 1, Cell::F(oc, ov), &s.money)?;
        put(ws, row, 2, Cell::F(rc, rv), &s.money)?;
        put(
            ws,
            row,
            3,
            Cell::F(format!("C{}-B{}", row + 1, row + 1), rv - ov),
            &s.money,
        )?;
        row += 1;
    }
    match cf.irr {
        Some(irr) => {
            // Half-yearly flows: IRR() gives the half-year rate; a year is two of them.
            let guess = (1.0 + irr).sqrt() - 1.0;
            put(
                ws,
                irr_row,
                4,
                Cell::F(
                    format!("(1+IRR(D{}:D{},{}))^2-1", flow_first + 1, row, num(guess)),
                    irr,
                ),
                &s.factor,
            )?;
            ws.write_string(irr_row, 5, &cf.irr_note)?;
        }
        None => {
            ws.write_string(irr_row, 4, format!("n/a: {}", cf.irr_note))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_letters_and_sheet_names() {
        assert_eq!(col(0), "A");
        assert_eq!(col(25), "Z");
        assert_eq!(col(26), "AA");
        let mut taken = vec![];
        let a = sheet_name("H100 on-prem: very long tier name indeed [x]", &mut taken);
        assert!(a.len() <= 31 && !a.contains(':') && !a.contains('['), "{a}");
        let b = sheet_name("H100 on-prem: very long tier name indeed [x]", &mut taken);
        assert_ne!(a, b);
        assert!(b.len() <= 31);
    }
}
