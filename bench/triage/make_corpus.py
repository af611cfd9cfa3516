"""Writes corpus.jsonl: a Monday morning's events, each labelled as a person would triage it.

Run once (``python bench/triage/make_corpus.py``); the JSONL it writes is what is committed
and scored. The payloads are shaped exactly as the bundled servers' watchers emit them
(``mcp_servers/gmail/watcher.py`` ``new_email_payload``, ``mcp_servers/gcal/watcher.py``
``_payload``, ``mcp_servers/ssh/monitor.py``, ``mcp_servers/weather/alerts.py``), plus
webhooks from scripts and services. ``expected`` is the label; the dry run ignores it. The
corpus is judged at NOW (``score.py`` passes it as ``--now``).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ZURICH = ZoneInfo("Europe/Zurich")
NOW = datetime(2026, 12, 7, 8, 0, tzinfo=ZURICH)  # Monday, 08:00 in Zurich
ME = "Kim Meier <kim@corp.example>"
OUT = Path(__file__).with_name("corpus.jsonl")
events: list[dict] = []


def utc(minutes_ago: float) -> str:
    moment = NOW - timedelta(minutes=minutes_ago)
    return moment.astimezone(ZoneInfo("UTC")).isoformat().replace("+00:00", "Z")


def add(expected: str, source: str, type_: str, payload: dict) -> None:
    events.append({"source": source, "type": type_, "payload": payload, "expected": expected})


def mail(expected: str, sender: str, subject: str, labels: list[str], snippet: str = "") -> None:
    n = len(events)
    message_id = f"18c{n:05x}e2a9f1b{n:03d}"
    ago = 5 + (n * 37) % 700
    add(
        expected,
        "gmail",
        "event/new_email",
        {
            "id": message_id,
            "summary": f"New email from {sender}: {subject}",
            "severity": "info",
            "occurred_at": utc(ago),
            "url": f"https://mail.google.com/mail/u/0/#all/{message_id}",
            "thread_id": message_id,
            "from": sender,
            "to": ME,
            "subject": subject,
            "snippet": snippet or subject,
            "labels": ["UNREAD", *labels, "INBOX"],
            "date": (NOW - timedelta(minutes=ago)).strftime("%a, %d %b %Y %H:%M:%S +0100"),
        },
    )


def calendar(expected: str, method: str, title: str, start: datetime | str, **extra: str) -> None:
    n = len(events)
    event_id = f"k{n:03d}q4r7s9t1u3v5w7"
    updated = utc(10 + n % 300)
    when = start if isinstance(start, str) else start.isoformat()
    end = extra.pop("end", "") or (
        "" if isinstance(start, str) else (start + timedelta(hours=1)).isoformat()
    )
    if method == "new":
        type_, occurrence, summary = "event/new_calendar_event", event_id, f"New event: {title}"
    elif method == "changed":
        type_, occurrence = "event/calendar_event_changed", f"{event_id}@{updated}"
        summary = f"Event changed: {title}"
    else:
        type_, occurrence = "event/calendar_event_cancelled", f"{event_id}@cancelled"
        summary = f"Event cancelled: {title}"
    payload = {
        "id": occurrence,
        "summary": f"{summary} ({when})",
        "severity": "info",
        "occurred_at": updated,
        "url": f"https://www.google.com/calendar/event?eid={event_id}",
        "event_id": event_id,
        "calendar_id": "primary",
        "title": title,
        "start": when,
        "end": end or None,
        "location": extra.get("location"),
        "organizer": extra.get("organizer", "kim@corp.example"),
        "status": "cancelled" if method == "cancelled" else "confirmed",
    }
    add(expected, "gcal", type_, {k: v for k, v in payload.items() if v is not None})


def at(days: int, hour: int, minute: int = 0) -> datetime:
    return (NOW + timedelta(days=days)).replace(hour=hour, minute=minute)


def disk(
    expected: str, alias: str, path: str, used: int, threshold: int = 90, state: str = "alert"
):
    alerting = state == "alert"
    what = f"{alias}: disk {path} (/dev/nvme0n1p2) at {used}%"
    ssh(
        expected,
        f"{alias}/disk:{path}",
        alias,
        "disk",
        path,
        state,
        f"{what}, threshold {threshold}%" if alerting else f"{what}, back under {threshold}%",
        ("critical" if used >= 95 else "warning") if alerting else "info",
        use_percent=used,
        threshold=threshold,
        mount="/dev/nvme0n1p2",
        available_kib=(100 - used) * 1_000_000,
    )


def ssh(expected, key, alias, check, subject, state, summary, severity, count=1, **details):
    add(
        expected,
        "ssh",
        "event/ssh_alert",
        {
            "id": f"ssh:{key}#{count}",
            "summary": summary,
            "severity": severity,
            "occurred_at": utc(30 + len(events) % 400),
            "alias": alias,
            "check": check,
            "subject": subject,
            "state": state,
            **details,
        },
    )


def weather(expected: str, kind: str, place: str, value: float, threshold: float, hour: int):
    severity = {"rain_probability": "info", "temperature_drop": "info"}.get(kind, "warning")
    if kind == "wind_gusts" and value >= 89 or kind == "aqi" and value >= 100:
        severity = "critical"
    local = f"{NOW:%Y-%m-%d}T{hour:02d}:00"
    unit = {"rain_probability": "%", "temperature_drop": "°C", "wind_gusts": "km/h", "aqi": ""}
    summary = {
        "rain_probability": f"Rain likely in {place} from {hour:02d}:00 ({value:.0f}%).",
        "wind_gusts": f"Wind gusts up to {value:.0f} km/h in {place} from {hour:02d}:00.",
        "temperature_drop": f"Temperature drop in {place}: "
        f"tomorrow's high {value}°C below today's.",
        "aqi": f"Air quality {'extremely poor' if value >= 100 else 'poor'} in {place} "
        f"(European AQI {value:.0f}, alert at {threshold:.0f}).",
    }[kind]
    occurred = utc(15 + len(events) % 200)
    add(
        expected,
        "weather",
        "event/weather_alert",
        {
            "id": f"weather:{place.lower()}:{kind}:{occurred}:1",
            "summary": summary,
            "severity": severity,
            "occurred_at": occurred,
            "kind": kind,
            "location": place,
            "place": place,
            "latitude": 47.37,
            "longitude": 8.54,
            "value": value,
            "threshold": threshold,
            "unit": unit[kind],
            "at": local,
        },
    )


def hook(expected: str, source: str, type_: str, payload: dict) -> None:
    add(expected, source, type_, payload)


# --- Gmail ------------------------------------------------------------------------------
PROMOS = [
    ("Deals Weekly <news@deals.example>", "50% off everything this weekend"),
    ("Zalando <info@zalando.example>", "Your winter favourites are back in stock"),
    ("Digitec <newsletter@digitec.example>", "Cyber Monday: today only"),
    ("SWISS <newsletter@swiss.example>", "Fly to Lisbon from CHF 89"),
    ("Coop <newsletter@coop.example>", "Your weekly offers"),
    ("Booking.com <email@booking.example>", "Kim, prices dropped in Vienna"),
    ("Udemy <no-reply@udemy.example>", "Courses from CHF 12.99 ends tonight"),
    ("IKEA <news@ikea.example>", "New in: the winter collection"),
    ("Galaxus <info@galaxus.example>", "Black Week extended"),
    ("Spotify <no-reply@spotify.example>", "3 months of Premium for free"),
    ("Airbnb <automated@airbnb.example>", "Ideas for your next trip"),
    ("Manor <newsletter@manor.example>", "Gift ideas under CHF 30"),
    ("Nespresso <news@nespresso.example>", "The festive coffees are here"),
    ("Decathlon <news@decathlon.example>", "Ski season starts now"),
    ("Ochsner Sport <info@ochsner.example>", "-30% on running shoes"),
    ("Apple <news@insideapple.example>", "Give something special this year"),
    ("Uber Eats <uber@uber.example>", "CHF 10 off your next order"),
    ("Brack <newsletter@brack.example>", "Last chance: Advent calendar deals"),
    ("The Body Shop <news@thebodyshop.example>", "Your festive gift guide"),
    ("SBB <newsletter@sbb.example>", "Supersaver tickets for the holidays"),
]
for sender, subject in PROMOS:
    mail("low", sender, subject, ["CATEGORY_PROMOTIONS"])
# Gmail flags some promotions important; a person still sees an advert
mail(
    "low",
    "Lufthansa Miles & More <news@miles.example>",
    "Your miles expire soon",
    ["CATEGORY_PROMOTIONS", "IMPORTANT"],
)
mail(
    "low",
    "Amazon <store-news@amazon.example>",
    "Kim, deals picked for you",
    ["CATEGORY_PROMOTIONS", "IMPORTANT"],
)

SOCIAL = [
    ("LinkedIn <messages-noreply@linkedin.example>", "You appeared in 9 searches this week"),
    ("LinkedIn <invitations@linkedin.example>", "Marco Rossi wants to connect"),
    ("LinkedIn <jobs-noreply@linkedin.example>", "12 new jobs for Platform Engineer"),
    ("Facebook <notification@facebookmail.example>", "Lena shared a memory with you"),
    ("Instagram <no-reply@mail.instagram.example>", "tom.h and 4 others liked your photo"),
    ("Strava <no-reply@strava.example>", "Jonas gave you kudos"),
    ("Meetup <info@meetup.example>", "New event in Zurich Python User Group"),
    ("X <notify@x.example>", "Trending in Switzerland"),
    ("Xing <mailrobot@xing.example>", "3 people visited your profile"),
    ("Mastodon <notifications@fosstodon.example>", "You have 5 new notifications"),
    ("Goodreads <no-reply@goodreads.example>", "Sara finished a book"),
    ("Duolingo <hello@duolingo.example>", "Keep your 40-day streak going"),
]
for sender, subject in SOCIAL:
    mail("low", sender, subject, ["CATEGORY_SOCIAL"])

FORUMS = [
    ("python-dev <python-dev@python.example>", "[Python-Dev] PEP 999 discussion"),
    ("sqlite-users <sqlite-users@sqlite.example>", "Re: WAL checkpoint starvation"),
    ("Discourse <noreply@discuss.example>", "Summary of the week on discuss.example"),
    ("Google Groups <noreply@groups.example>", "Digest for zurich-hikers - 7 updates"),
    ("pytest-dev <pytest-dev@python.example>", "Re: plugin ordering"),
    ("debian-user <debian-user@lists.example>", "Re: apt pinning question"),
    ("Stack Exchange <do-not-reply@stackexchange.example>", "New answers to your question"),
    ("HN Digest <digest@hn.example>", "Top stories this week"),
]
for sender, subject in FORUMS:
    mail("low", sender, subject, ["CATEGORY_FORUMS"])

UPDATES = [
    ("The Batch <newsletter@deeplearning.example>", "This week in AI"),
    ("Swisscom <noreply@swisscom.example>", "Your December invoice is available"),
    ("Post CH <noreply@post.example>", "Your parcel is on its way"),
    ("Galaxus <noreply@galaxus.example>", "Order 4417 shipped"),
    ("GitHub <noreply@github.com>", "[corp/api] Dependabot: bump requests to 2.33"),
    ("Google <no-reply@accounts.google.example>", "Your Google Account storage is 70% full"),
    ("Notion <notify@notion.example>", "Weekly digest: 14 page updates"),
    ("Slack <feedback@slack.example>", "Your weekly summary"),
    ("Zoom <no-reply@zoom.example>", "Cloud recording is now available"),
    ("Dropbox <no-reply@dropbox.example>", "Ana shared a folder with you"),
    ("SBB Mobile <noreply@sbb.example>", "Your ticket receipt"),
    ("Twint <noreply@twint.example>", "Monthly statement"),
    ("Medium Daily Digest <noreply@medium.example>", "Why SQLite is enough"),
    ("Calendly <notifications@calendly.example>", "Weekly availability summary"),
    ("Atlassian <jira@corp.atlassian.example>", "[JIRA] 6 issues updated in API"),
]
for sender, subject in UPDATES:
    mail("low", sender, subject, ["CATEGORY_UPDATES"])

UPDATES_IMPORTANT = [
    ("GitHub <noreply@github.com>", "[corp/api] CI failed on main"),
    ("Google <no-reply@accounts.google.example>", "Security alert: new sign-in on Windows"),
    ("UBS <noreply@ubs.example>", "Payment of CHF 2,400 could not be executed"),
    ("AWS Notifications <no-reply@aws.example>", "Your AWS bill exceeds the budget you set"),
    (
        "Let's Encrypt <expiry@letsencrypt.example>",
        "Certificate for api.corp.example expires in 5 days",
    ),
    ("GitHub <noreply@github.com>", "[corp/api] Security advisory for a dependency"),
    ("Swiss Tax Office <noreply@estv.example>", "Reminder: tax return due 15 December"),
    ("Stripe <notifications@stripe.example>", "Action needed: verify your business details"),
]
for sender, subject in UPDATES_IMPORTANT:
    mail("high", sender, subject, ["CATEGORY_UPDATES", "IMPORTANT"])

PEOPLE_IMPORTANT = [
    ("Ana Lopez <ana@corp.example>", "Contract needs your signature today"),
    ("Ben Keller <ben@corp.example>", "Budget review moved to 14:00 — please confirm"),
    ("Claire Dubois <claire@client.example>", "Go-live blocked: login fails for all users"),
    ("Dr. Roth <praxis@roth.example>", "Your appointment tomorrow at 10:30"),
    ("Ana Lopez <ana@corp.example>", "Re: Contract needs your signature today"),
    ("Paul Weber <paul@corp.example>", "Need the Q4 numbers before the board meeting"),
    ("Lea Frei <lea@school.example>", "Parent-teacher meeting: please reply by Tuesday"),
    ("HR <hr@corp.example>", "Action required: sign your new employment terms"),
    ("Marc Suter <marc@landlord.example>", "Water shut off in the building on Wednesday"),
    ("Sofia Russo <sofia@corp.example>", "Customer escalation — can you join at 9?"),
    ("Tom Huber <tom@partner.example>", "Invoice 2026-118 overdue"),
    ("Nina Baumann <nina@corp.example>", "Your talk slot moved to Thursday morning"),
]
for sender, subject in PEOPLE_IMPORTANT:
    mail("high", sender, subject, ["CATEGORY_PERSONAL", "IMPORTANT"])

STARRED = [
    ("Ana Lopez <ana@corp.example>", "Offer letter draft for the new hire"),
    ("Mum <mum@family.example>", "Flight times for Christmas"),
    ("Ben Keller <ben@corp.example>", "Notes from Friday's architecture review"),
    ("Claire Dubois <claire@client.example>", "Signed SOW attached"),
]
for sender, subject in STARRED:
    mail("high", sender, subject, ["CATEGORY_PERSONAL", "STARRED"])

PEOPLE = [
    ("Jonas Meier <jonas@family.example>", "Photos from Saturday"),
    ("Sam Frei <sam@corp.example>", "Link to the design doc we talked about"),
    ("Ben Keller <ben@corp.example>", "FYI: new coffee machine on 3rd floor"),
    ("Lena Graf <lena@friends.example>", "Dinner next week?"),
    ("Paul Weber <paul@corp.example>", "Slides from last week's all-hands"),
    ("Sara Kunz <sara@corp.example>", "Re: offsite ideas"),
    ("Mario Bianchi <mario@friends.example>", "Book recommendation"),
    ("Tina Roth <tina@corp.example>", "Welcome our new team member Lukas"),
    ("Ana Lopez <ana@corp.example>", "Thanks for the review"),
    ("Jan Vogel <jan@club.example>", "Training schedule for January"),
    ("Eva Schmid <eva@neighbours.example>", "Parcel left with us"),
    ("Claire Dubois <claire@client.example>", "Minutes of our Friday call"),
    ("Lukas Brunner <lukas@corp.example>", "Hello from your new colleague"),
    ("Sofia Russo <sofia@corp.example>", "Re: naming of the new service"),
    ("Ben Keller <ben@corp.example>", "Article you might like"),
    ("Grandpa <opa@family.example>", "Happy St. Nicholas' Day"),
    ("Nina Baumann <nina@corp.example>", "Conference travel policy update"),
    ("Kurt Meier <kurt@family.example>", "Ski weekend in January?"),
    ("Sara Kunz <sara@corp.example>", "Lunch menu this week"),
    ("Jonas Meier <jonas@family.example>", "Re: Photos from Saturday"),
]
for sender, subject in PEOPLE:
    mail("normal", sender, subject, ["CATEGORY_PERSONAL"])
# Gmail marks some chatter important; a person reads it as ordinary mail
for sender, subject in [
    ("Sam Frei <sam@corp.example>", "Lunch today?"),
    ("Tina Roth <tina@corp.example>", "Cake in the kitchen"),
    ("Paul Weber <paul@corp.example>", "Re: Slides from last week's all-hands"),
    ("Lena Graf <lena@friends.example>", "Re: Dinner next week?"),
]:
    mail("normal", sender, subject, ["CATEGORY_PERSONAL", "IMPORTANT"])
# urgent to a person, but Gmail did not flag them: the rules cannot read the words
mail(
    "high", "Paul Weber <paul@corp.example>", "Need the slides by noon today", ["CATEGORY_PERSONAL"]
)
mail(
    "high",
    "Claire Dubois <claire@client.example>",
    "Can we move today's call to 10:00?",
    ["CATEGORY_PERSONAL"],
)

# --- Calendar ---------------------------------------------------------------------------
for title, start in [
    ("Board meeting", at(0, 9)),
    ("1:1 with Sam", at(0, 15)),
    ("Customer call Claire", at(0, 10)),
    ("Dentist", at(0, 17, 30)),
    ("Sprint planning", at(1, 7, 30)),
    ("Budget review", at(0, 14)),
    ("Team lunch", at(0, 12)),
    ("Interview: backend candidate", at(0, 16)),
]:
    calendar("high", "changed", title, start, organizer="ben@corp.example")
for title, start in [
    ("Architecture review", at(0, 11)),
    ("Yoga", at(0, 18)),
    ("Coffee with Lena", at(0, 8, 30)),
    ("Release sync", at(0, 13)),
    ("Parent evening", at(0, 19)),
    ("Standup", at(1, 6, 45)),
]:
    calendar("high", "cancelled", title, start)
for title, start in [
    ("Incident review: API outage", at(0, 11, 30)),
    ("Call with the auditor", at(0, 15, 30)),
    ("Emergency change approval", at(0, 9, 15)),
    ("Pick up the kids", at(0, 16, 45)),
    ("Drinks with the client", at(0, 18, 30)),
    ("Workshop prep", at(1, 7)),
]:
    calendar("high", "new", title, start, organizer="sofia@corp.example")
for method, title, start in [
    ("changed", "Quarterly planning", at(3, 9)),
    ("changed", "Offsite", at(10, 9)),
    ("changed", "Dentist check-up", at(21, 8)),
    ("cancelled", "Book club", at(4, 19)),
    ("cancelled", "Team retro", at(2, 15)),
    ("new", "Christmas party", at(11, 18)),
    ("new", "Conference talk", at(3, 10)),
    ("new", "Haircut", at(5, 12)),
    ("new", "Company holiday", f"{(NOW + timedelta(days=17)):%Y-%m-%d}"),
    ("new", "Ski weekend", f"{(NOW + timedelta(days=40)):%Y-%m-%d}"),
    ("changed", "Training: leadership", at(8, 13)),
    ("new", "1:1 with Nina", at(2, 10)),
    ("changed", "Sprint review", at(4, 14)),
    ("cancelled", "Gym class", at(6, 7)),
    ("new", "Flight to Lisbon", at(30, 6, 40)),
    ("changed", "Parents visiting", f"{(NOW + timedelta(days=19)):%Y-%m-%d}"),
]:
    calendar("normal", method, title, start)
# changes to what is over already: nobody needs to hear them
calendar("low", "cancelled", "Friday drinks", at(-3, 17))
calendar("low", "changed", "Sunday run", at(-1, 9))

# --- SSH monitor ------------------------------------------------------------------------
disk("urgent", "db-1", "/var/lib/postgresql", 97)
disk("urgent", "db-2", "/", 99)
disk("urgent", "backup-1", "/srv/backup", 96)
disk("urgent", "web-1", "/var/log", 95)
for alias, target in [("db-3", "10.0.0.13"), ("vpn-1", "vpn.corp.example"), ("nas", "nas.home")]:
    ssh(
        "urgent",
        f"{alias}/reachable",
        alias,
        "reachable",
        target,
        "alert",
        f"{alias}: kim@{target}:22 unreachable: timed out",
        "critical",
        error="timed out",
    )
for alias, path, used in [
    ("web-2", "/", 91),
    ("ci-1", "/var/lib/docker", 93),
    ("app-1", "/tmp", 90),
]:
    disk("high", alias, path, used)
for alias, unit in [
    ("web-1", "nginx.service"),
    ("db-1", "pg-backup.service"),
    ("app-2", "worker@3.service"),
    ("ci-1", "gitlab-runner.service"),
    ("mail-1", "postfix.service"),
    ("app-1", "certbot-renew.service"),
    ("nas", "smartd.service"),
]:
    ssh(
        "high",
        f"{alias}/unit:{unit}",
        alias,
        "unit",
        unit,
        "alert",
        f"{alias}: systemd unit {unit} failed",
        "warning",
        active="failed",
        sub="failed",
        description=unit.split(".")[0],
    )
# all-clears of alerts an earlier briefing showed
for alias, path, used in [("web-3", "/", 71), ("db-2", "/var/log", 80), ("ci-2", "/", 64)]:
    disk("low", alias, path, used, state="resolved")
for alias, unit in [("web-3", "nginx.service"), ("app-3", "worker@1.service")]:
    ssh(
        "low",
        f"{alias}/unit:{unit}",
        alias,
        "unit",
        unit,
        "resolved",
        f"{alias}: systemd unit {unit} no longer failed",
        "info",
        count=2,
    )
for alias, target in [("vpn-2", "vpn2.corp.example"), ("printer", "printer.home")]:
    ssh(
        "low",
        f"{alias}/reachable",
        alias,
        "reachable",
        target,
        "resolved",
        f"{alias}: kim@{target}:22 reachable again",
        "info",
        count=2,
    )
# an alert that cleared within the same night: one story, shown once with its alert
disk("high", "app-4", "/var", 92)
disk("low", "app-4", "/var", 84, state="resolved")

# --- Weather ----------------------------------------------------------------------------
weather("urgent", "wind_gusts", "Zurich", 110, 60, 18)
weather("urgent", "wind_gusts", "Bern", 95, 60, 20)
weather("urgent", "aqi", "Milan", 128, 60, 9)
weather("urgent", "wind_gusts", "Lucerne", 92, 60, 16)
weather("urgent", "aqi", "Basel", 104, 60, 11)
for place, value, hour in [("Zurich", 72, 14), ("Geneva", 65, 17), ("Chur", 80, 21)]:
    weather("high", "wind_gusts", place, value, 60, hour)
for place, value in [("Zurich", 75), ("Lugano", 68), ("Geneva", 62)]:
    weather("high", "aqi", place, value, 60, 12)
for place, value, hour in [
    ("Zurich", 80, 17),
    ("Bern", 70, 15),
    ("Basel", 90, 8),
    ("Lucerne", 65, 19),
    ("Geneva", 85, 12),
    ("Winterthur", 75, 16),
]:
    weather("normal", "rain_probability", place, value, 60, hour)
for place, value in [("Zurich", 8.5), ("St. Gallen", 7.0), ("Davos", 11.0)]:
    weather("normal", "temperature_drop", place, value, 6, 0)

# --- Webhooks ---------------------------------------------------------------------------
hook(
    "urgent",
    "uptime",
    "monitor_down",
    {
        "id": "uptime:api:8812",
        "summary": "api.corp.example is DOWN (HTTP 503 for 5 minutes)",
        "severity": "critical",
        "occurred_at": utc(12),
        "url": "https://status.corp.example/monitors/api",
        "monitor": "api.corp.example",
        "status": "down",
    },
)
hook(
    "urgent",
    "backup",
    "webhook",
    {
        "id": "restic:nas:2026-12-07",
        "summary": "Offsite backup failed for the third night: repository locked",
        "severity": "critical",
        "occurred_at": utc(300),
        "host": "nas",
    },
)
for n, (source, summary) in enumerate(
    [
        ("grafana", "p95 latency of checkout above 800 ms for 15 min"),
        ("backup", "Backup of db-1 took 4 h (usually 40 min)"),
        ("cron", "Certificate renewal job exited 1 on app-1"),
    ]
):
    hook(
        "high",
        source,
        "webhook",
        {
            "id": f"{source}:{n}",
            "summary": summary,
            "severity": "warning",
            "occurred_at": utc(60 + n),
        },
    )
for n, amount in enumerate(["CHF 1,200.00", "CHF 89.00"]):
    hook(
        "high",
        "stripe",
        "invoice.payment_failed",
        {
            "id": f"evt_1QpF{n}x2eZvKYlo2C",
            "object": "event",
            "type": "invoice.payment_failed",
            "summary": f"Payment of {amount} failed for customer ACME AG",
            "created": int((NOW - timedelta(hours=2 + n)).timestamp()),
        },
    )
for n, summary in enumerate(
    ["Nightly backup of db-1 completed", "Nightly backup of nas completed"]
):
    hook(
        "low",
        "backup",
        "webhook",
        {
            "id": f"restic:ok:{n}",
            "summary": summary,
            "severity": "info",
            "occurred_at": utc(400 + n),
        },
    )
for n, ref in enumerate(["feature/login", "docs/typo"]):
    hook(
        "low",
        "github",
        "push",
        {
            "id": f"push-{n}",
            "summary": f"ana pushed 2 commits to corp/api {ref}",
            "ref": f"refs/heads/{ref}",
            "repository": {"full_name": "corp/api"},
            "sender": {"login": "ana"},
        },
    )
for n, summary in enumerate(
    ["Deploy of api v2.14.0 to production finished", "Deploy of web v5.2.1 to staging finished"]
):
    hook(
        "normal",
        "deploy",
        "webhook",
        {"id": f"deploy:{n}", "summary": summary, "severity": "info", "occurred_at": utc(90 + n)},
    )

if __name__ == "__main__":
    with OUT.open("w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for event in events:
        counts[event["expected"]] = counts.get(event["expected"], 0) + 1
    print(f"{len(events)} events written to {OUT}: {counts}")
