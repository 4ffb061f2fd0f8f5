// A board's schedule in words, as the API defines it (docs/api.md, Boards; docs/design/periods.md):
// the period, when it resets in the board's time zone, the window (a tournament's dates) and
// the grace. Times are shown in the board's time zone, named after them.

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const CRON_DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/**
 * @typedef {object} ScheduledBoard
 * @property {string | { every: string, anchor: string } | { cron: string }} period
 * @property {string} timezone
 * @property {{ startsAt?: string, endsAt?: string } | null} [window]
 * @property {number} graceSeconds
 */

/**
 * "Weekly, resets Monday 00:00 Europe/Paris · grace 5 min"; "Tournament 4 Dec 2026 18:00 –
 * 11 Dec 2026 18:00 Europe/Paris · grace 5 min". A cron expression these words cannot say
 * is quoted as it is.
 * @param {ScheduledBoard} board
 * @returns {string}
 */
export function scheduleText(board) {
  const zone = board.timezone;
  const { startsAt, endsAt } = board.window ?? {};
  const parts = [];
  if (board.period === 'all') {
    if (startsAt && endsAt) parts.push(`Tournament ${dateTime(startsAt, zone)} – ${dateTime(endsAt, zone)} ${zone}`);
    else if (startsAt) parts.push(`All time from ${dateTime(startsAt, zone)} ${zone}`);
    else if (endsAt) parts.push(`All time until ${dateTime(endsAt, zone)} ${zone}`);
    else parts.push('All time, never resets');
  } else {
    parts.push(periodText(board.period, zone));
    if (startsAt && endsAt) parts.push(`open ${dateTime(startsAt, zone)} – ${dateTime(endsAt, zone)}`);
    else if (startsAt) parts.push(`opens ${dateTime(startsAt, zone)}`);
    else if (endsAt) parts.push(`ends ${dateTime(endsAt, zone)}`);
  }
  // A period that never ends never closes: its grace means nothing.
  if (board.period !== 'all' || endsAt) parts.push(graceText(board.graceSeconds));
  return parts.join(' · ');
}

/**
 * @param {ScheduledBoard['period']} period
 * @param {string} zone
 */
function periodText(period, zone) {
  if (period === 'day') return `Daily, resets 00:00 ${zone}`;
  if (period === 'week') return `Weekly, resets Monday 00:00 ${zone}`;
  if (period === 'month') return `Monthly, resets on the 1st at 00:00 ${zone}`;
  if (typeof period === 'object' && 'every' in period) return everyText(period, zone);
  if (typeof period === 'object' && 'cron' in period) return cronText(period.cron, zone);
  return String(period);
}

/**
 * `{ every: "2w", anchor }`: back-to-back periods from the anchor; days and weeks keep the
 * anchor's local time, hours are absolute.
 * @param {{ every: string, anchor: string }} period
 * @param {string} zone
 */
function everyText({ every, anchor }, zone) {
  const match = /^(\d+)([hdw])$/.exec(every);
  if (!match) return `Every ${every} from ${dateTime(anchor, zone)} ${zone}`;
  const n = Number(match[1]);
  const start = partsOf(anchor, zone);
  const from = `from ${start.date}`;
  if (match[2] === 'h') return `Every ${n === 1 ? 'hour' : `${n} hours`} from ${start.date} ${start.time} ${zone}`;
  if (match[2] === 'd')
    return n === 1
      ? `Daily, resets ${start.time} ${zone}, ${from}`
      : `Every ${n} days, resets ${start.time} ${zone}, ${from}`;
  return n === 1
    ? `Weekly, resets ${start.weekday} ${start.time} ${zone}, ${from}`
    : `Every ${n} weeks, resets ${start.weekday} ${start.time} ${zone}, ${from}`;
}

/**
 * The usual shapes in words (a time every day, on a weekday, on a day of the month); any
 * other expression as it is.
 * @param {string} cron
 * @param {string} zone
 */
function cronText(cron, zone) {
  const fields = cron.trim().split(/\s+/);
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields;
  const number = (text, max) => (/^\d{1,2}$/.test(text ?? '') && Number(text) <= max ? Number(text) : null);
  const m = number(minute, 59);
  const hr = number(hour, 23);
  if (fields.length === 5 && m !== null && hr !== null && month === '*') {
    const at = `${String(hr).padStart(2, '0')}:${String(m).padStart(2, '0')} ${zone}`;
    const weekday = cronWeekday(dayOfWeek);
    const day = number(dayOfMonth, 31);
    if (dayOfMonth === '*' && dayOfWeek === '*') return `Daily, resets ${at}`;
    if (dayOfMonth === '*' && weekday !== null) return `Weekly, resets ${weekday} ${at}`;
    if (day !== null && day > 0 && dayOfWeek === '*') return `Monthly, resets on the ${ordinal(day)} at ${at}`;
  }
  return `Resets at each tick of the cron schedule "${cron.trim()}" in ${zone}`;
}

/** @param {string | undefined} field a day of week: 0-7 (0 and 7 Sunday) or its three letters */
function cronWeekday(field) {
  const text = (field ?? '').toUpperCase();
  if (/^[0-7]$/.test(text)) return WEEKDAYS[Number(text) % 7];
  const named = CRON_DAYS.indexOf(text);
  return named >= 0 ? WEEKDAYS[named] : null;
}

/** @param {number} n */
function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** @param {number} seconds */
function graceText(seconds) {
  if (!seconds) return 'no grace';
  if (seconds % 3600 === 0) return `grace ${seconds / 3600} h`;
  if (seconds % 60 === 0) return `grace ${seconds / 60} min`;
  return `grace ${seconds} s`;
}

/**
 * An instant as a date and time in the board's zone: "4 Dec 2026 18:00".
 * @param {string} iso
 * @param {string} zone
 */
function dateTime(iso, zone) {
  const { date, time } = partsOf(iso, zone);
  return `${date} ${time}`.trim();
}

/**
 * @param {string} iso
 * @param {string} zone
 * @returns {{ date: string, time: string, weekday: string }}
 */
function partsOf(iso, zone) {
  const at = new Date(iso);
  let parts;
  try {
    parts = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      weekday: 'long',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(at);
  } catch {
    // A zone this browser does not know: the instant as the API gave it.
    return { date: iso, time: '', weekday: '' };
  }
  const part = (type) => parts.find((p) => p.type === type)?.value ?? '';
  return {
    date: `${part('day')} ${part('month')} ${part('year')}`,
    time: `${part('hour')}:${part('minute')}`,
    weekday: part('weekday'),
  };
}
