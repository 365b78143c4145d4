"""The demo tenant: Adele Vance's mailbox and OneDrive, a shared support mailbox, and a
SharePoint library, generated deterministically with the standard library.

Everything is built from fixed text and one ``random.Random`` with a fixed seed, so every
``--demo`` start serves the same mailbox. Message and folder data is built when the
emulator first needs it (tens of milliseconds); attachment and file bytes are built only
when a request asks for them, then kept.

People and companies are fictional (names from Microsoft's own documentation); every
pre-authenticated URL is fake.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import mfconnector.demo_documents as docbuild
from mfconnector.emulator import ids
from mfconnector.emulator.model import (
    Attachment,
    Drive,
    DriveItem,
    Folder,
    Mailbox,
    Message,
    Recipient,
)

__all__ = ["DEMO_NOW", "Tenant", "build_tenant"]

DEMO_NOW = datetime(2026, 3, 6, 17, 0, 0, tzinfo=UTC)
"""The demo's "now": the newest message arrived just before it."""

DOMAIN = "contoso.onmicrosoft.com"
ME: Recipient = ("Adele Vance", f"adelev@{DOMAIN}")
SUPPORT: Recipient = ("Contoso Support", f"support@{DOMAIN}")

PEOPLE: dict[str, Recipient] = {
    "adele": ME,
    "alex": ("Alex Wilber", f"alexw@{DOMAIN}"),
    "megan": ("Megan Bowen", f"meganb@{DOMAIN}"),
    "lee": ("Lee Gu", f"leeg@{DOMAIN}"),
    "nestor": ("Nestor Wilke", f"nestorw@{DOMAIN}"),
    "patti": ("Patti Fernandez", f"pattif@{DOMAIN}"),
    "lynne": ("Lynne Robbins", f"lynner@{DOMAIN}"),
    "diego": ("Diego Siciliani", f"diegos@{DOMAIN}"),
    "isaiah": ("Isaiah Langer", f"isaiahl@{DOMAIN}"),
    "johanna": ("Johanna Lorenz", f"johannal@{DOMAIN}"),
    "joni": ("Joni Sherman", f"jonis@{DOMAIN}"),
    "lidia": ("Lidia Holloway", f"lidiah@{DOMAIN}"),
    "miriam": ("Miriam Graham", f"miriamg@{DOMAIN}"),
    "pradeep": ("Pradeep Gupta", f"pradeepg@{DOMAIN}"),
    "grady": ("Grady Archie", f"gradya@{DOMAIN}"),
    "henrietta": ("Henrietta Mueller", f"henriettam@{DOMAIN}"),
    "joerg": ("Jörg Müller", "joerg.mueller@fabrikam.de"),
    "camille": ("Camille Durand", "camille.durand@tailspintoys.fr"),
    "hanako": ("佐藤 花子", "hanako.sato@northwindtraders.jp"),
    "layla": ("ليلى حداد", "layla.haddad@wingtiptoys.ae"),
    "noa": ("נועה כהן", "noa.cohen@litware.co.il"),
    "billing": ("Fabrikam Billing", "billing@fabrikam.com"),
    "weekly": ("Contoso Weekly", "newsletter@contoso.com"),
    "mc": ("Microsoft 365 Message center", "o365mc@microsoft.com"),
    "airline": ("Blue Yonder Airlines", "no-reply@blueyonderairlines.com"),
    "coffee": ("Fourth Coffee", "receipts@fourthcoffee.com"),
    "phish": ("Micros0ft Account Team", "security@micros0ft-alerts.com"),
    "lottery": ("Prize Department", "claims@winner-notice.biz"),
    "customer1": ("Kari Nordmann", "kari.nordmann@adatum.no"),
    "customer2": ("Mario Rossi", "mario.rossi@proseware.it"),
    "customer3": ("Wei Chen", "wei.chen@relecloud.cn"),
}
STAFF = [key for key, (_, address) in PEOPLE.items() if address.endswith(DOMAIN) and key != "adele"]

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
PDF = "application/pdf"
PNG = "image/png"


@dataclass
class Tenant:
    """What the emulator serves: mailboxes by every name they answer to, and drives."""

    mailboxes: dict[str, Mailbox]
    """By user id, mail and UPN (lower case); ``me`` is the signed-in user."""
    drives: dict[str, Drive]
    """By drive id."""
    personal_drive: dict[str, str]
    """User id -> id of that user's OneDrive."""
    me: str

    def mailbox(self, key: str) -> Mailbox | None:
        return self.mailboxes.get(key.lower()) or self.mailboxes.get(key)


# --- text -----------------------------------------------------------------------------

SENTENCES = {
    "budget": [
        "The Budget 2027 model now includes the revised headcount plan for the retail stores.",
        "Finance asked us to hold discretionary spending flat until the forecast is signed off.",
        "Travel costs came in eight percent under plan, which offsets the higher cloud spend.",
        "Please add your cost centre assumptions to the shared workbook by Friday.",
        "The capital expenditure line for the new Seattle showroom moved to the second half.",
        "We still need a decision on whether marketing spend sits in the launch budget.",
        "The variance report compares actuals against the approved budget line by line.",
        "Lynne will present the budget summary to the leadership team on Tuesday.",
    ],
    "launch": [
        "The Contoso Launch event is confirmed for the 14th of April at the Redmond campus.",
        "Press materials are in review with legal and should be final next week.",
        "The product demo script needs a clearer story about offline sync.",
        "We booked the keynote hall and the overflow room with live streaming.",
        "Partners get early access to the launch deck two weeks before the event.",
        "The launch checklist tracks every dependency, owner and due date in one place.",
        "Customer quotes from the pilot programme will anchor the press release.",
        "Retail stores will run in-store demos during the launch weekend.",
    ],
    "invoice": [
        "Please find the invoice for the February consulting services attached.",
        "Payment is due within thirty days of the invoice date.",
        "The purchase order number must appear on every invoice we process.",
        "Accounts payable flagged a duplicate invoice from the same vendor.",
        "The invoice total includes value added tax at the standard rate.",
        "Remittance advice will follow once the payment run completes on Thursday.",
    ],
    "meeting": [
        "Thanks everyone for joining the sync this morning.",
        "Action items are listed below with owners and due dates.",
        "We agreed to move the weekly review to Wednesdays at ten.",
        "The recording and the whiteboard photo are in the team channel.",
        "Next time we will walk through the open risks in the tracker.",
        "Megan will circulate the revised timeline before the next meeting.",
        "The pilot feedback was mostly positive, with concerns about onboarding.",
    ],
    "travel": [
        "Your flight to Munich departs from Seattle at 13:45 local time.",
        "Check-in opens twenty-four hours before departure in the mobile app.",
        "Your hotel reservation near the Messe is confirmed for three nights.",
        "Seat 14C has been assigned on both legs of the journey.",
        "Baggage allowance is one checked bag of up to 23 kilograms.",
    ],
    "security": [
        "We noticed a new sign-in to your account from an unfamiliar device.",
        "If this was you, you can safely ignore this message.",
        "Multifactor authentication will be required for all admins from April.",
        "Phishing simulations showed a lower click rate than last quarter.",
        "Report suspicious messages with the Report button in Outlook.",
    ],
    "hiring": [
        "We have three strong candidates for the store operations manager role.",
        "Interview loops are scheduled for next Tuesday and Wednesday.",
        "Please submit your interview feedback within one business day.",
        "The offer letter template was updated with the new benefits summary.",
        "Onboarding for the two new analysts starts on the first of the month.",
    ],
    "product": [
        "The Mark 8 tablet firmware update fixes the {issue} issue.",
        "Inventory of the Surface Duo accessories is low in the northwest region.",
        "Customer satisfaction scores improved across all retail locations.",
        "The returns process now supports printing labels at home.",
        "The loyalty programme reached two hundred thousand members.",
    ],
}

MORE_SENTENCES = {
    "budget": [
        "{person} thinks the {region} stores can absorb a {pct} percent cut in overtime.",
        "The forecast for {month} assumes the new pricing holds through the quarter.",
        "Can we move the {region} refurbishment out of this year's capital plan?",
        "I reconciled the {month} accruals; two purchase orders are still open.",
        "The steering group wants three scenarios: flat, {pct} percent up and {pct} percent down.",
        "Facilities sent a revised quote for the {region} warehouse lease.",
        "{person} asked for the contractor spend split by project code.",
        "The software licences renewal lands in {month} and is not in the model yet.",
    ],
    "launch": [
        "{person} is drafting the speaker notes for the opening keynote.",
        "The venue in {region} needs the final headcount for catering by {day}.",
        "We moved the embargo on the press release to {day} at nine.",
        "The livestream rehearsal is booked for {day} afternoon.",
        "Swag boxes for the {region} partners ship from the warehouse on {day}.",
        "{person} wants one more pass on the pricing slide before we lock the deck.",
        "Registration passed {count} sign-ups this morning.",
        "The accessibility review of the event site found two contrast issues.",
    ],
    "invoice": [
        "Our records show invoice {ref} as unpaid; please confirm the payment date.",
        "The credit note for the returned monitors is {ref}.",
        "Please update the bank details on file before the next payment run.",
        "Statement of account for {month} is attached for your reconciliation.",
        "{person} approved the invoice in the procurement portal on {day}.",
    ],
    "meeting": [
        "{person} will book a room for the follow-up on {day}.",
        "We ran out of time before the {region} update; it moves to next week.",
        "The decision log in the team site now has {count} entries.",
        "Please read the pre-read before {day}; we will not present it.",
        "Notes from the breakout on hybrid work are in the shared folder.",
    ],
    "travel": [
        "Your train from Frankfurt Airport to the city centre leaves every fifteen minutes.",
        "The conference shuttle picks up at the hotel lobby at 8:15 on {day}.",
        "A taxi from the airport to the venue takes about forty minutes.",
        "Your return flight boards at gate {count} on {day}.",
        "Remember to submit your expense report within ten days of returning.",
    ],
    "security": [
        "Your password expires in {count} days; change it from the account portal.",
        "A sign-in from {region} was blocked by conditional access on {day}.",
        "The security awareness course is due by the end of {month}.",
        "Device compliance: your laptop needs the latest operating system update.",
        "Admins: review the new alert policy for mass file downloads.",
    ],
    "hiring": [
        "{person} will run the case study for the analyst loop on {day}.",
        "The recruiter shared {count} new profiles for the {region} store role.",
        "We need a hiring manager sign-off before the offer goes out.",
        "Please keep interview notes factual and send them through the portal.",
        "The referral bonus for store roles doubles until the end of {month}.",
    ],
    "product": [
        "The {region} stores report long queues for tablet screen repairs.",
        "Accessory bundles sold {count} units in the first week.",
        "The firmware 2.3 rollout pauses while we investigate Bluetooth pairing.",
        "Support tickets about sync conflicts dropped by {pct} percent.",
        "{person} wants a teardown video of the new charging dock for the training site.",
        "The Mark 8 keyboard cover is back in stock in {region}.",
        "Warranty claims for the headset hinge are above target this month.",
        "The {region} repair centre now turns tablets around in {count} hours.",
        "A customer asked whether the Mark 8 pen works with last year's model.",
        "Replacement chargers for the {region} stores arrive on {day}.",
        "The knowledge base article on {issue} was viewed {count} times last week.",
        "Store staff in {region} asked for a script for trade-in offers.",
        "The {month} survey shows delivery times as the top complaint.",
        "{person} is testing the beta firmware on the demo units.",
        "Out-of-box failures for the docking station fell to {pct} in a thousand.",
    ],
}
"""More sentences per topic, with slots, drawn by ``_Writer`` from its own generator: the
demo's bodies differ from message to message, so a search is selective (in 0.2 every
product message said "battery drain"), while the main generator moves exactly as before."""
SLOTS = {
    "person": ("Lynne", "Megan", "Alex", "Diego", "Isaiah", "Nestor", "Patti", "Joni", "Grady"),
    "region": ("Seattle", "Portland", "Vancouver", "Denver", "Austin", "Boston", "Toronto"),
    "month": ("January", "February", "March", "April", "May", "June"),
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    "pct": ("3", "5", "7", "10", "12"),
    "count": ("14", "27", "38", "52", "160", "245"),
    "ref": ("INV-20417", "INV-20533", "CN-8812", "INV-21002", "CN-9031"),
    "issue": (
        "battery drain",
        "screen flicker",
        "Wi-Fi dropout",
        "stylus lag",
        "camera focus",
        "slow charging",
        "speaker crackle",
        "touch calibration",
    ),
}
VARIETY_SEED = 20260305

MESSAGE_CENTER = [
    ("Plan for change: Outlook on the web retires classic attachments view", "MC701234"),
    ("Microsoft Teams: new meeting recap features rolling out", "MC702345"),
    ("SharePoint: updated storage quota reports", "MC703456"),
    ("Exchange Online: changes to mailbox auditing defaults", "MC704567"),
    ("OneDrive: files on demand improvements for macOS", "MC705678"),
    ("Microsoft Purview: new retention label options", "MC706789"),
    ("Planner: task history is now available", "MC707890"),
    ("Microsoft Entra: conditional access templates updated", "MC708901"),
    ("Viva Engage: community analytics refresh", "MC709012"),
    ("Outlook: search suggestions powered by your recent files", "MC710123"),
    ("Microsoft 365 apps: monthly enterprise channel update", "MC711234"),
    ("Forms: branching questions in quizzes", "MC712345"),
]


def plain(sentences: Sequence[str]) -> list[str]:
    """Pool sentences used as they stand (in documents and long bodies), their ``{slot}``s
    filled with each slot's last value: only ``_Writer`` varies them."""
    fixed = {name: options[-1] for name, options in SLOTS.items()}
    return [sentence.format(**fixed) for sentence in sentences]


class _Writer:
    """Deterministic prose from the sentence pools."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.variety = random.Random(VARIETY_SEED)

    def sentences(self, topic: str, count: int) -> list[str]:
        """``count`` different sentences of ``topic``, their slots filled."""
        pool = [*SENTENCES[topic], *MORE_SENTENCES[topic]]
        self.rng.randrange(len(SENTENCES[topic]))  # the main generator moves as in 0.2
        chosen = self.variety.sample(pool, min(count, len(pool)))
        return [self._fill(sentence) for sentence in chosen]

    def _fill(self, sentence: str) -> str:
        values = {name: self.variety.choice(options) for name, options in SLOTS.items()}
        return sentence.format(**values)

    def paragraph(self, topic: str, count: int = 3) -> str:
        return " ".join(self.sentences(topic, count))


def _html(paragraphs: Sequence[str], quoted: str = "") -> str:
    body = "".join(f"<p>{_escape(text)}</p>\r\n" for text in paragraphs)
    return (
        '<html>\r\n<head>\r\n<meta http-equiv="Content-Type" content="text/html; '
        'charset=utf-8">\r\n<style>p{margin:0}</style>\r\n</head>\r\n<body>\r\n'
        f'<div dir="ltr">\r\n{body}</div>\r\n{quoted}</body>\r\n</html>\r\n'
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def outlook_time(moment: datetime) -> str:
    """``Friday, March 6, 2026 4:42 PM``, as Outlook writes "Sent:" (portable strftime)."""
    hour = moment.hour % 12 or 12
    half = "AM" if moment.hour < 12 else "PM"
    return f"{moment:%A, %B} {moment.day}, {moment.year} {hour}:{moment:%M} {half}"


def _quote_header(message: Message) -> str:
    """Outlook's quoted-history header block, as createReply writes it."""
    to = "; ".join(name for name, _ in message.to)
    sent = outlook_time(message.sent or message.received)
    return (
        '<hr style="display:inline-block;width:98%" tabindex="-1">\r\n'
        '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" '
        f'style="font-size:11pt" color="#000000"><b>From:</b> {_escape(message.sender[0])} '
        f"&lt;{message.sender[1]}&gt;<br>\r\n<b>Sent:</b> {sent}<br>\r\n"
        f"<b>To:</b> {_escape(to)}<br>\r\n<b>Subject:</b> {_escape(message.subject)}</font>"
        "<div>&nbsp;</div>\r\n</div>\r\n"
    )


def quoted_history(message: Message) -> str:
    """The previous message's whole body, below Outlook's header block."""
    inner = message.body
    if message.body_type == "html":
        start = inner.find("<body>")
        end = inner.rfind("</body>")
        if start != -1 and end != -1:
            inner = inner[start + len("<body>") : end]
    else:
        inner = "".join(f"<p>{_escape(line)}</p>" for line in inner.splitlines())
    return _quote_header(message) + f"<div>{inner}</div>\r\n"


# --- the builder ------------------------------------------------------------------------


QUESTIONS = ["the Mark 8 rollout", "Thursday standup", "the analyst offer", "store returns"]
BUDGET_TOPICS = ["assumptions", "cost centres", "forecast", "variance", "sign-off", "travel"]
LAUNCH_TOPICS = ["venue", "press", "partners", "demo", "retail", "streaming"]
ARCHIVE_TOPICS = ["retail", "pilot", "loyalty", "returns", "inventory"]
SPANS = {
    "Archive": (30.0, 150.0),
    "Deleted Items": (0.1, 20.0),
    "Junk Email": (0.1, 10.0),
    "Drafts": (0.1, 5.0),
}
"""(days before "now" where a folder's mail starts, days it spans); others (0.05, 60)."""


class _MailBuilder:
    def __init__(self, mailbox: Mailbox, rng: random.Random) -> None:
        self.mailbox = mailbox
        self.rng = rng
        self.write = _Writer(rng)
        self.count = 0

    def folder(
        self, key: str, name: str, parent: str | None, well_known: str | None = None
    ) -> Folder:
        parent_id = self.mailbox.well_known.get(parent or "", parent or "")
        folder = Folder(ids.folder_id(f"{self.mailbox.mail}:{key}"), name, parent_id, well_known)
        return self.mailbox.add_folder(folder)

    def when(self, folder: str) -> datetime:
        """A moment in the folder's span of days before "now", spread at random."""
        name = self.mailbox.folders[folder].display_name
        start, span = SPANS.get(name, (0.05, 60.0))
        days = start + span * self.rng.random()
        return (DEMO_NOW - timedelta(days=days)).replace(microsecond=0)

    def add(
        self,
        folder: Folder,
        sender: Recipient,
        to: Sequence[Recipient],
        subject: str,
        paragraphs: Sequence[str] | None = None,
        *,
        html: str | None = None,
        text: str | None = None,
        received: datetime | None = None,
        conversation: str | None = None,
        unique: str | None = None,
        **extra: Any,
    ) -> Message:
        self.count += 1
        label = f"{self.mailbox.mail}:m{self.count:04d}"
        moment = received or self.when(folder.id)
        if text is not None:
            body, body_type = text, "text"
        else:
            body, body_type = html or _html(paragraphs or []), "html"
        domain = sender[1].rsplit("@", 1)[1]
        message = Message(
            label=label,
            immutable_id=ids.immutable_message_id(label),
            folder_id=folder.id,
            subject=subject,
            body=body,
            body_type=body_type,
            sender=sender,
            to=list(to),
            received=moment,
            sent=moment - timedelta(seconds=3 + self.count % 40),
            conversation_id=ids.conversation_id(conversation or label),
            internet_message_id=f"<{ids.guid(label).replace('-', '')[:24].upper()}@{domain}>",
            unique_body=unique,
            created=moment,
            modified=moment + timedelta(seconds=2),
            **extra,
        )
        message.headers = [
            ("Received", f"from mail.{domain} by EX1PR01MB.prod.outlook.com"),
            ("From", f"{sender[0]} <{sender[1]}>"),
            ("To", ", ".join(f"{n} <{a}>" for n, a in to)),
            ("Subject", subject),
            ("Message-ID", message.internet_message_id),
            ("MIME-Version", "1.0"),
            ("Content-Type", "text/html; charset=utf-8" if body_type == "html" else "text/plain"),
        ]
        return self.mailbox.add_message(message)

    def attach(
        self,
        message: Message,
        name: str,
        content_type: str | None,
        data: Callable[[], bytes] | None,
        *,
        kind: str = "file",
        inline: bool = False,
        item: Message | None = None,
        size: int | None = None,
    ) -> Attachment:
        index = len(message.attachments)
        cached = functools.cache(data) if data is not None else None
        attachment = Attachment(
            id=ids.attachment_id(message.label, index),
            name=name,
            content_type=content_type,
            kind=kind,
            declared_size=size,
            modified=message.received - timedelta(minutes=5),
            data=cached,
            is_inline=inline,
            content_id=f"image{index:03d}.png@01DA0000.00000000" if inline else None,
            item=item,
            source_url=(
                "https://contoso-my.sharepoint.com/personal/adelev_contoso_onmicrosoft_com/"
                f"Documents/{name}"
                if kind == "reference"
                else None
            ),
        )
        message.attachments.append(attachment)
        return attachment


# Documents with real text, shared by mail attachments and drive files.


def budget_review_docx() -> bytes:
    return docbuild.docx(
        "Q1 Budget Review",
        [
            "Summary: spending is on plan for the first quarter of 2026.",
            *SENTENCES["budget"],
            "Decision needed: approve the revised headcount plan before the March close.",
        ],
    )


def budget_model_xlsx() -> bytes:
    rows: list[list[str | float | int]] = [["Cost centre", "Q1 plan", "Q1 actual", "Variance"]]
    for n, centre in enumerate(
        ["Retail stores", "Marketing", "Cloud services", "Travel", "Training"]
    ):
        plan = 120_000 + 17_500 * n
        actual = plan + (-1) ** n * 3_250 * (n + 1)
        rows.append([centre, plan, actual, actual - plan])
    assumptions = [["Assumption", "Value"], ["Inflation", "3.1%"], ["Headcount growth", "4 FTE"]]
    return docbuild.xlsx([("Budget 2027", rows), ("Assumptions", assumptions)])


def launch_deck_pptx() -> bytes:
    return docbuild.pptx(
        [
            ("Contoso Launch – kickoff", ["April 14, Redmond campus", "Owner: Megan Bowen"]),
            ("Goals", SENTENCES["launch"][:3]),
            (
                "Timeline",
                ["Press review: March 20", "Partner preview: March 31", "Launch: April 14"],
            ),
            ("Risks", ["Offline sync demo", "Venue capacity", "Legal review of press materials"]),
        ]
    )


def invoice_pdf(number: str, amount: str) -> bytes:
    return docbuild.pdf(
        f"Fabrikam, Inc. - Invoice {number}",
        [
            "Bill to: Contoso Ltd., Accounts Payable, One Microsoft Way, Redmond WA",
            f"Invoice number: {number}",
            "Invoice date: 2026-02-27   Due date: 2026-03-29",
            "Description: consulting services, February 2026",
            f"Total due: {amount}",
            *SENTENCES["invoice"][:3],
        ],
    )


CONTRACT_SECTIONS = (
    (
        "Definitions",
        (
            '"Services" means the consulting work described in a statement of work.',
            '"Deliverables" means the documents and software Fabrikam hands over under a SOW.',
            '"Confidential Information" means non-public information marked or understood as such.',
            '"Business Day" means a day other than a weekend or public holiday in Washington.',
        ),
    ),
    (
        "Services",
        (
            "Fabrikam provides the Services described in each statement of work (SOW).",
            "Each SOW names its scope, milestones, acceptance criteria and fees.",
            "A change to a SOW takes effect only when both parties sign a change order.",
            "Fabrikam assigns qualified staff and replaces anyone Contoso reasonably objects to.",
        ),
    ),
    (
        "Term",
        (
            "This agreement starts on 1 March 2026 and lasts two years.",
            "It renews for one-year periods unless either party gives ninety days notice.",
            "A SOW in progress at expiry continues under these terms until it is complete.",
        ),
    ),
    (
        "Fees and payment",
        (
            "Fees are invoiced monthly in arrears and payable within thirty days.",
            "Travel expenses are reimbursed at cost when approved in writing in advance.",
            "Late payments bear interest at one percent a month or the legal maximum if lower.",
            "Contoso may withhold a disputed amount in good faith while the dispute is resolved.",
            "Rates are fixed for the first twelve months, then may rise by at most four percent.",
        ),
    ),
    (
        "Acceptance",
        (
            "Contoso has ten Business Days to accept or reject each Deliverable.",
            "A rejection must list the acceptance criteria the Deliverable does not meet.",
            "Fabrikam corrects a rejected Deliverable at no charge within fifteen Business Days.",
        ),
    ),
    (
        "Intellectual property",
        (
            "Contoso owns the Deliverables once they are paid for in full.",
            "Fabrikam keeps its pre-existing tools and grants Contoso a licence to use them.",
            "Neither party may use the other's trademarks without written consent.",
        ),
    ),
    (
        "Confidentiality",
        (
            "Each party protects the other's Confidential Information with reasonable care.",
            "The duty survives for five years after this agreement ends.",
            "Information that becomes public through no fault of the recipient is not covered.",
            "A party may disclose information when a court or regulator requires it by law.",
        ),
    ),
    (
        "Data protection",
        (
            "Fabrikam processes personal data only on Contoso's documented instructions.",
            "Fabrikam notifies Contoso of a personal data breach within forty-eight hours.",
            "Sub-processors need Contoso's prior written approval.",
        ),
    ),
    (
        "Warranties",
        (
            "Fabrikam warrants that the Services are performed with professional skill and care.",
            "Deliverables will conform to their SOW for ninety days after acceptance.",
            "Except as stated here, no other warranties apply, express or implied.",
        ),
    ),
    (
        "Liability",
        (
            "Each party's total liability is capped at the fees paid in the prior twelve months.",
            "Neither party is liable for indirect or consequential losses.",
            "The cap does not apply to breaches of confidentiality or to gross negligence.",
        ),
    ),
    (
        "Insurance",
        (
            "Fabrikam keeps professional indemnity cover of at least two million dollars.",
            "Certificates of insurance are provided on request.",
        ),
    ),
    (
        "Termination",
        (
            "Either party may terminate for convenience with sixty days written notice.",
            "Either party may end it at once if the other materially breaches and does not cure.",
            "On termination Contoso pays for Services performed up to the termination date.",
        ),
    ),
    (
        "Governing law",
        (
            "This agreement is governed by the laws of the State of Washington.",
            "The courts of King County, Washington have exclusive jurisdiction.",
            "The parties first try to settle a dispute through their executive sponsors.",
        ),
    ),
)
"""The demo MSA: a contract whose clauses differ (0.2 repeated six clauses nine times,
which read like a parser bug), long enough for two PDF pages."""


def contract_pdf() -> bytes:
    lines = []
    for number, (title, clauses) in enumerate(CONTRACT_SECTIONS, 1):
        lines.append(f"{number}. {title}")
        lines.extend(f"{number}.{n} {clause}" for n, clause in enumerate(clauses, 1))
    return docbuild.pdf("Master Services Agreement - Contoso and Fabrikam", lines)


HOTEL_TEXT = (
    "Dear Ms Vance, your reservation at the Hotel Messe München is confirmed for three "
    "nights, 14 to 17 April 2026. Breakfast is included. Check-in from 15:00."
)


def hotel_eml() -> bytes:
    return docbuild.eml(
        sender="Hotel Messe München <reservations@hotel-messe.de>",
        to=[f"{ME[0]} <{ME[1]}>"],
        subject="Reservation confirmed: 14-17 April 2026",
        text=HOTEL_TEXT,
        sent=datetime(2026, 2, 2, 9, 30, tzinfo=UTC),
        message_id="<reservation-4711@hotel-messe.de>",
    )


def notes_txt() -> bytes:
    return ("Meeting notes\n\n" + "\n".join(SENTENCES["meeting"]) + "\n").encode()


@functools.cache
def big_scan_png() -> bytes:
    """3.3 MB of image: over Graph's 3 MB limit for attaching through a plain POST."""
    return docbuild.png(1100, 1000, 7, noise=True)


def build_adele(rng: random.Random) -> Mailbox:
    mailbox = Mailbox(
        user_id=ids.guid("user:" + ME[1]),
        display_name=ME[0],
        mail=ME[1],
        upn=ME[1],
        time_zone="Pacific Standard Time",
    )
    b = _MailBuilder(mailbox, rng)
    root = b.folder("root", "Top of Information Store", None, "msgfolderroot")
    root.parent_id = ids.folder_id(mailbox.mail + ":ipm-subtree-parent")
    inbox = b.folder("inbox", "Inbox", "msgfolderroot", "inbox")
    receipts = b.folder("receipts", "Receipts", inbox.id)
    newsletters = b.folder("newsletters", "Newsletters", inbox.id)
    archive = b.folder("archive", "Archive", "msgfolderroot", "archive")
    projects = b.folder("projects", "Projects", "msgfolderroot")
    budget = b.folder("budget", "Budget 2027", projects.id)
    launch = b.folder("launch", "Contoso Launch", projects.id)
    sent = b.folder("sentitems", "Sent Items", "msgfolderroot", "sentitems")
    drafts = b.folder("drafts", "Drafts", "msgfolderroot", "drafts")
    deleted = b.folder("deleteditems", "Deleted Items", "msgfolderroot", "deleteditems")
    junk = b.folder("junkemail", "Junk Email", "msgfolderroot", "junkemail")
    b.folder("outbox", "Outbox", "msgfolderroot", "outbox")
    b.folder("conversationhistory", "Conversation History", "msgfolderroot", "conversationhistory")
    for hidden, name in (
        ("recoverableitemsdeletions", "Recoverable Items Deletions"),
        ("searchfolders", "Finder"),
    ):
        b.folder(hidden, name, "msgfolderroot", hidden).is_hidden = True
    p = PEOPLE

    _threads(b, inbox, sent, archive, budget, launch)
    _invoices(b, inbox, archive)
    _notices(b, inbox, newsletters, receipts)
    _project_mail(b, budget, launch)
    _international(b, inbox)
    _sent_and_drafts(b, sent, drafts)
    _junk_and_deleted(b, junk, deleted)
    _long_reads(b, archive)

    # The newest inbox message: flagged, important, categorised, with a workbook.
    newest = b.add(
        inbox,
        p["lynne"],
        [ME],
        "Budget 2027 – numbers needed by Friday",
        [b.write.paragraph("budget", 3), "Can you send me your team's figures by Friday noon?"],
        received=DEMO_NOW - timedelta(minutes=18),
        is_read=False,
        importance="high",
        flag={
            "flagStatus": "flagged",
            "startDateTime": {"dateTime": "2026-03-06T00:00:00.0000000", "timeZone": "UTC"},
            "dueDateTime": {"dateTime": "2026-03-13T00:00:00.0000000", "timeZone": "UTC"},
        },
        categories=["Finance", "Red category"],
    )
    b.attach(newest, "Budget 2027 model.xlsx", XLSX, budget_model_xlsx)
    _hostile_html(b, junk)
    return mailbox


HOSTILE_HTML = "<div>" + "".join(f"<b id={n}>" for n in range(250)) + "</div>" + "<p>x" * 60_000
"""243 KB that an HTML5 tree builder turns into 15 million nodes: each ``<p>`` re-opens the
250 formatting elements (0.2.0 took 5.6 GB converting it)."""
HOSTILE_TEXT = "x\r\n" * 60_000
"""Its text as the emulator renders it (``htmltext.html_to_text``, checked by a test), set
up front so the first search or preview does not spend seconds converting it."""


def _hostile_html(b: _MailBuilder, junk: Folder) -> None:
    """Added last, with a fixed date, so no other message's id or date moves."""
    message = b.add(
        junk,
        PEOPLE["lottery"],
        [ME],
        "Your parcel is waiting",
        html=HOSTILE_HTML,
        received=DEMO_NOW - timedelta(days=2, hours=3),
        inference="other",
        keeps_html=True,
    )
    message._text_cache = (message.version, HOSTILE_TEXT, HOSTILE_TEXT)


def _threads(
    b: _MailBuilder, inbox: Folder, sent: Folder, archive: Folder, budget: Folder, launch: Folder
) -> None:
    """Conversations: Re:/Fw: chains where each reply quotes the whole history below it."""
    p = PEOPLE
    plans = [
        ("Q1 budget review", "budget", ["lynne", "adele", "alex", "lynne", "adele"], inbox),
        (
            "Contoso Launch venue and catering",
            "launch",
            ["megan", "adele", "megan", "diego"],
            inbox,
        ),
        (
            "Interview loop for store operations manager",
            "hiring",
            ["johanna", "adele", "johanna"],
            inbox,
        ),
        (
            "Pilot feedback from the Bellevue store",
            "product",
            ["nestor", "adele", "patti", "nestor", "adele", "lee"],
            inbox,
        ),
        ("Weekly retail sync – action items", "meeting", ["patti", "alex", "adele"], inbox),
        (
            "Fabrikam consulting invoice query",
            "invoice",
            ["billing", "adele", "billing", "adele"],
            archive,
        ),
        ("Trip to Munich for the Fabrikam workshop", "travel", ["joerg", "adele", "joerg"], inbox),
        (
            "Launch press release – legal review",
            "launch",
            ["miriam", "adele", "grady", "miriam"],
            launch,
        ),
        ("Headcount plan for 2027", "budget", ["alex", "adele", "lynne"], budget),
        ("Admin MFA rollout", "security", ["isaiah", "adele", "isaiah"], inbox),
        (
            "Loyalty programme milestone",
            "product",
            ["lidia", "adele", "pradeep", "lidia", "henrietta", "adele", "lidia"],
            archive,
        ),
        ("Demo script for offline sync", "launch", ["diego", "adele", "megan", "diego"], launch),
    ]
    for n, (topic, pool, speakers, folder) in enumerate(plans):
        conversation = f"thread:{n}"
        previous: Message | None = None
        start = DEMO_NOW - timedelta(days=3 + 4 * n, hours=n)
        for turn, speaker in enumerate(speakers):
            sender = p[speaker]
            others = [p[s] for s in dict.fromkeys(speakers) if s != speaker] or [ME]
            if turn == 0:
                subject = topic
            elif n % 4 == 3 and turn == len(speakers) - 1:
                subject = f"Fw: {topic}"
            else:
                subject = f"Re: {topic}"
            fresh = [b.write.paragraph(pool, 2 + turn % 2)]
            if turn:
                fresh.insert(0, f"Hi {previous.sender[0].split(' ')[0]}," if previous else "Hi,")
            fresh.append(f"Thanks,\r\n{sender[0].split(' ')[0]}")
            quoted = quoted_history(previous) if previous else ""
            target = sent if speaker == "adele" else folder
            received = start + timedelta(hours=5 * turn, minutes=7 * turn)
            message = b.add(
                target,
                sender,
                others,
                subject,
                html=_html(fresh, quoted),
                unique=_html(fresh),
                received=received,
                conversation=conversation,
                is_read=speaker == "adele" or turn < len(speakers) - 1 or n % 3 != 0,
                categories=["Project Launch"] if pool == "launch" else [],
            )
            if n == 0 and turn == 0:
                b.attach(message, "Q1 Budget Review.docx", DOCX, budget_review_docx)
            if n == 1 and turn == 0:
                b.attach(message, "Contoso Launch – kickoff.pptx", PPTX, launch_deck_pptx)
            if n == 4 and turn == 0:
                b.attach(message, "notes.txt", "text/plain", notes_txt)
                b.attach(message, "whiteboard.png", PNG, lambda: docbuild.png(320, 200, 11))
            if n == 3 and turn == 2:
                b.attach(message, "Site survey – raw scan.png", PNG, big_scan_png)
            if n == 6 and turn == 0:
                b.attach(message, "Hotel confirmation.eml", "message/rfc822", hotel_eml)
            if n == 5 and turn == 0:
                original = b.add(
                    archive,
                    p["joerg"],
                    [ME],
                    "Original quote from Fabrikam",
                    ["Our quote for the February consulting engagement is EUR 18,400."],
                    received=received - timedelta(days=20),
                )
                b.mailbox.remove_message(original)  # it lives only inside the attachment
                b.attach(
                    message,
                    "Original quote from Fabrikam",
                    None,
                    None,
                    kind="item",
                    item=original,
                    size=32_005,
                )
            previous = message


def _invoices(b: _MailBuilder, inbox: Folder, archive: Folder) -> None:
    for n in range(15):
        number = f"INV-2026-{870 + n:04d}"
        amount = f"USD {3_250 + 415 * n:,}.00"
        folder = inbox if n < 12 else archive
        message = b.add(
            folder,
            PEOPLE["billing"],
            [ME],
            f"Invoice {number} from Fabrikam",
            [
                f"Dear customer, invoice {number} for {amount} is attached.",
                b.write.paragraph("invoice", 2),
            ],
            is_read=n % 4 != 0,
            categories=["Finance"] if n % 2 == 0 else [],
        )
        b.attach(message, f"{number}.pdf", PDF, functools.partial(invoice_pdf, number, amount))


def _notices(b: _MailBuilder, inbox: Folder, newsletters: Folder, receipts: Folder) -> None:
    for n, (title, code) in enumerate(MESSAGE_CENTER):
        b.add(
            inbox if n % 4 else newsletters,
            PEOPLE["mc"],
            [ME],
            f"({code}) {title}",
            [f"Message center notice {code}.", title + ".", b.write.paragraph("security", 2)],
            is_read=n % 3 != 0,
            inference="other",
        )
    for n in range(14):
        html = _newsletter(b, n)
        message = b.add(
            newsletters,
            PEOPLE["weekly"],
            [ME],
            f"Contoso Weekly #{112 - n}: retail highlights and launch news",
            html=html,
            is_read=n > 1,
            inference="other",
        )
        b.attach(
            message, f"banner{n}.png", PNG, functools.partial(docbuild.png, 120, 40, n), inline=True
        )
    for n in range(8):
        sender = PEOPLE[STAFF[(n * 5 + 2) % len(STAFF)]]
        topic = ["product", "meeting", "hiring", "product"][n % 4]
        b.add(
            inbox,
            sender,
            [ME],
            f"Quick question about {QUESTIONS[n % 4]}",
            ["Hi Adele,", b.write.paragraph(topic, 2), "Thanks!"],
            is_read=n % 3 == 0,
        )
    shops = ["Fourth Coffee", "Blue Yonder Airlines", "Fourth Coffee", "Wide World Importers"]
    for n in range(12):
        shop = shops[n % len(shops)]
        sender = PEOPLE["airline"] if "Airlines" in shop else PEOPLE["coffee"]
        total = f"${4 + n * 3}.{(n * 37) % 100:02d}"
        b.add(
            receipts,
            (shop, sender[1]),
            [ME],
            f"Your receipt from {shop} – order {5120 + n}",
            [
                f"Thank you for your purchase. Order {5120 + n}, total {total}.",
                "Keep this receipt for your expense report.",
            ],
        )
    for n in range(6):
        b.add(
            inbox,
            PEOPLE["airline"],
            [ME],
            f"Booking confirmation BY{4711 + n}: Seattle to Munich",
            [b.write.paragraph("travel", 4)],
            is_read=True,
        )


def _newsletter(b: _MailBuilder, n: int) -> str:
    sections = []
    for k, topic in enumerate(("product", "launch", "meeting", "hiring", "budget")):
        rows = "".join(
            f"<tr><td style='padding:4px'>{_escape(s)}</td></tr>"
            for s in b.write.sentences(topic, 4)
        )
        sections.append(
            f"<h2>Section {k + 1}: {topic.title()}</h2><table role='presentation'>{rows}</table>"
        )
    return (
        "<html><head><style>body{font-family:Segoe UI}</style>"
        "<script>track()</script></head><body>"
        f"<img src='cid:banner{n}.png' alt='Contoso Weekly'>"
        f"<h1>Contoso Weekly #{112 - n}</h1>"
        + "".join(sections)
        * (1 + n % 3)
        + "<p><a href='https://contoso.com/unsubscribe'>Unsubscribe</a></p>"
        "<img src='https://t.contoso.com/open.gif' width='1' height='1'></body></html>"
    )


def _project_mail(b: _MailBuilder, budget: Folder, launch: Folder) -> None:
    for n in range(24):
        sender = PEOPLE[STAFF[n % len(STAFF)]]
        message = b.add(
            budget,
            sender,
            [ME, PEOPLE["lynne"]],
            f"Budget 2027: {BUDGET_TOPICS[n % 6]} update {n + 1}",
            [b.write.paragraph("budget", 3)],
            is_read=n % 5 != 0,
            flag={"flagStatus": "complete"} if n % 7 == 0 else {"flagStatus": "notFlagged"},
            categories=["Finance"],
        )
        if n == 2:
            b.attach(message, "Budget 2027 model.xlsx", XLSX, budget_model_xlsx)
    for n in range(24):
        sender = PEOPLE[STAFF[(n * 3) % len(STAFF)]]
        message = b.add(
            launch,
            sender,
            [ME, PEOPLE["megan"]],
            f"Launch: {LAUNCH_TOPICS[n % 6]} status {n + 1}",
            [b.write.paragraph("launch", 3)],
            is_read=n % 4 != 0,
            importance="high" if n % 9 == 0 else "normal",
            categories=["Project Launch"],
            flag={"flagStatus": "flagged"} if n % 8 == 1 else {"flagStatus": "notFlagged"},
        )
        if n == 5:
            b.attach(message, "Launch deck.pptx", PPTX, launch_deck_pptx)
            b.attach(message, "Launch plan (OneDrive link)", None, None, kind="reference", size=0)


def _international(b: _MailBuilder, inbox: Folder) -> None:
    p = PEOPLE
    b.add(
        inbox,
        p["hanako"],
        [ME],
        "日本語の件名：東京オフィスの会議について",
        [
            "アデルさん、来週の東京オフィスでの会議の件です。",
            "議題は新製品の発売計画と予算です。よろしくお願いします。",
        ],
        is_read=False,
    )
    b.add(
        inbox,
        p["layla"],
        [ME],
        "اجتماع الميزانية في دبي",
        ["مرحبا أديل، نود تأكيد موعد اجتماع الميزانية في دبي.", "شكرا لك وأطيب التحيات."],
    )
    b.add(
        inbox,
        p["noa"],
        [ME],
        "פגישת השקה – Contoso Launch",
        ["שלום Adele, מצורף סיכום הפגישה על ה-launch.", "תודה רבה!"],
    )
    b.add(
        inbox,
        p["joerg"],
        [ME],
        "Angebot für den Workshop in München",
        [
            "Hallo Adele, das Angebot für den Workshop beträgt 18.400 €.",
            "Viele Grüße aus München, Jörg Müller",
        ],
    )
    b.add(
        inbox,
        p["camille"],
        [ME],
        "Réunion de lancement à Paris",
        [
            "Bonjour Adèle, la réunion de lancement aura lieu à Paris le 3 avril.",
            "Bien à vous, Camille",
        ],
    )
    b.add(
        inbox,
        p["megan"],
        [ME],
        "🎉 Launch party photos 😊",
        ["The team 👩‍💻👨‍👩‍👧 had a great time 🎉🎈 — photos are in the shared album 📸."],
        is_read=False,
    )
    b.add(
        inbox,
        p["customer3"],
        [ME],
        "合作伙伴会议 – partner meeting in Shanghai",
        ["您好，我们很高兴邀请您参加上海的合作伙伴会议。", "Best regards, Wei Chen"],
    )


def _sent_and_drafts(b: _MailBuilder, sent: Folder, drafts: Folder) -> None:
    for n in range(18):
        to = PEOPLE[STAFF[(n * 5) % len(STAFF)]]
        topic = ["budget", "launch", "meeting", "hiring", "product"][n % 5]
        b.add(
            sent,
            ME,
            [to],
            f"{topic.title()} follow-up for {to[0].split(' ')[0]}",
            [f"Hi {to[0].split(' ')[0]},", b.write.paragraph(topic, 2), "Best,\r\nAdele"],
        )
    drafts_plan: list[tuple[str, list[Recipient]]] = [
        ("Draft: launch thank-you note", [PEOPLE["megan"], PEOPLE["diego"]]),
        ("Budget questions for Lynne", [PEOPLE["lynne"]]),
        ("", []),
        ("Draft: reply to Fabrikam about the MSA", [PEOPLE["joerg"]]),
    ]
    for n, (subject, recipients) in enumerate(drafts_plan):
        message = b.add(
            drafts,
            ME,
            recipients,
            subject,
            [b.write.paragraph("launch" if n % 2 == 0 else "budget", 2)] if subject else [],
            is_draft=True,
        )
        message.sent = None


def _junk_and_deleted(b: _MailBuilder, junk: Folder, deleted: Folder) -> None:
    p = PEOPLE
    phishing = b.add(
        junk,
        p["phish"],
        [ME],
        "Action required: your password expires today",
        [
            "Your password expires today. Verify your account at "
            "https://micros0ft-alerts.com/verify now."
        ],
        is_read=False,
        inference="other",
    )
    b.attach(
        phishing,
        "INV-2026-0877_\u202efdp.scr",
        "application/octet-stream",
        lambda: b"MZ" + bytes(510),
    )
    for n in range(4):
        b.add(
            junk,
            p["lottery"],
            [ME],
            f"Congratulations! You have won prize #{9000 + n}",
            ["Send your bank details to claim your prize immediately."],
            inference="other",
        )
    for n in range(8):
        sender = PEOPLE[STAFF[(n * 7) % len(STAFF)]]
        b.add(
            deleted,
            sender,
            [ME],
            f"Lunch order for {['Monday', 'Tuesday', 'Wednesday', 'Thursday'][n % 4]}",
            ["Who is in for lunch? The usual place at noon."],
        )


def _long_reads(b: _MailBuilder, archive: Folder) -> None:
    """Bodies at the 10,000-character read limit, and a very long HTML thread."""
    p = PEOPLE
    words = " ".join(plain(SENTENCES["product"]) + SENTENCES["meeting"]) + " "
    for length in (9_999, 10_000, 10_001):
        text = (words * (length // len(words) + 1))[:length]
        b.add(
            archive,
            p["pradeep"],
            [ME],
            f"Store audit transcript ({length:,} characters)",
            text=text,
        )
    prefix = (words * 20)[: 10_000 - 1]
    b.add(
        archive,
        p["megan"],
        [ME],
        "Launch retrospective – full notes 🎉",
        text=prefix + "🎉😊" + " Thanks all for a great launch." * 8,
    )
    contract = _html([f"Clause {n}: {s}" for n, s in enumerate(SENTENCES["invoice"] * 40, 1)])
    message = b.add(
        archive, p["joerg"], [ME], "Master Services Agreement – Contoso and Fabrikam", html=contract
    )
    b.attach(message, "Fabrikam MSA.pdf", PDF, contract_pdf)
    b.add(
        archive,
        p["isaiah"],
        [
            *(PEOPLE[s] for s in STAFF),
            *(("Store " + str(n), f"store{n}@{DOMAIN}") for n in range(50)),
        ],
        "All stores: spring opening hours",
        ["Spring opening hours start on March 20 for every store."],
    )
    for n in range(22):
        sender = PEOPLE[STAFF[(n * 11) % len(STAFF)]]
        b.add(
            archive,
            sender,
            [ME],
            f"Archived: {ARCHIVE_TOPICS[n % 5]} report week {n + 1}",
            [b.write.paragraph("product", 3)],
        )


def build_support(rng: random.Random) -> Mailbox:
    """The shared mailbox support@: customer tickets and the team's replies."""
    mailbox = Mailbox(
        user_id=ids.guid("user:" + SUPPORT[1]),
        display_name=SUPPORT[0],
        mail=SUPPORT[1],
        upn=SUPPORT[1],
        time_zone="Pacific Standard Time",
    )
    b = _MailBuilder(mailbox, rng)
    root = b.folder("root", "Top of Information Store", None, "msgfolderroot")
    root.parent_id = ids.folder_id(mailbox.mail + ":ipm-subtree-parent")
    inbox = b.folder("inbox", "Inbox", "msgfolderroot", "inbox")
    sent = b.folder("sentitems", "Sent Items", "msgfolderroot", "sentitems")
    b.folder("drafts", "Drafts", "msgfolderroot", "drafts")
    b.folder("deleteditems", "Deleted Items", "msgfolderroot", "deleteditems")
    b.folder("archive", "Archive", "msgfolderroot", "archive")
    customers = ["customer1", "customer2", "customer3"]
    for n in range(21):
        customer = PEOPLE[customers[n % 3]]
        ticket = 40_310 + n
        problem = [
            "My Mark 8 tablet drains its battery overnight",
            "I cannot print a return label",
            "My loyalty points are missing",
        ][n % 3]
        message = b.add(
            inbox,
            customer,
            [SUPPORT],
            f"[Ticket #{ticket}] {problem}",
            [f"Hello, {problem.lower()}.", b.write.paragraph("product", 2)],
            conversation=f"ticket:{ticket}",
            is_read=n % 3 != 0,
        )
        if n % 2 == 0:
            b.add(
                sent,
                SUPPORT,
                [customer],
                f"Re: [Ticket #{ticket}] {problem}",
                html=_html(
                    ["Thank you for contacting Contoso Support.", b.write.paragraph("product", 1)],
                    quoted_history(message),
                ),
                conversation=f"ticket:{ticket}",
                received=message.received + timedelta(hours=2),
            )
    return mailbox


# --- drives -----------------------------------------------------------------------------


class _DriveBuilder:
    def __init__(self, drive: Drive, label: str) -> None:
        self.drive = drive
        self.label = label
        self.count = 0

    def folder(self, path: str, days_ago: int = 60) -> DriveItem:
        return self._add(path, None, None, days_ago, "", folder=True)

    def file(
        self,
        path: str,
        mime: str,
        data: Callable[[], bytes],
        *,
        text: str = "",
        days_ago: int = 10,
        author: Recipient = ME,
        size: int | None = None,
    ) -> DriveItem:
        return self._add(path, mime, data, days_ago, text, author=author, size=size)

    def _add(
        self,
        path: str,
        mime: str | None,
        data: Callable[[], bytes] | None,
        days_ago: int,
        text: str,
        *,
        folder: bool = False,
        author: Recipient = ME,
        size: int | None = None,
    ) -> DriveItem:
        parent_path, _, name = path.rpartition("/")
        parent = self.drive.by_path(parent_path)
        assert parent is not None, path
        self.count += 1
        moment = DEMO_NOW - timedelta(days=days_ago, hours=self.count % 11, minutes=self.count)
        cached = functools.cache(data) if data is not None else None
        item = DriveItem(
            id=ids.drive_item_id(f"{self.label}:{path}"),
            name=name,
            parent_id=parent.id,
            created=moment - timedelta(days=3),
            modified=moment,
            author=author,
            is_folder=folder,
            mime=mime,
            data=cached,
            text=text,
            guid=ids.guid(f"{self.label}:{path}"),
        )
        item.declared_size = size if size is not None else (None if cached else 0)
        return self.drive.add(item)


def _text_file(content: str) -> tuple[Callable[[], bytes], str]:
    data = content.encode("utf-8")
    return (lambda: data), content


LOG_BYTES = 2_600_000
LOG_INCIDENT = (
    "2026-03-05T23:58:41Z WARN sync mailbox=adelev throttled by Graph: Retry-After 30\n"
    "2026-03-05T23:59:12Z ERROR sync mailbox=adelev delta token expired (syncStateNotFound); "
    "starting a full resync\n"
    "2026-03-05T23:59:57Z ERROR sync mailbox=adelev full resync aborted after 45 s: "
    "disk quota exceeded on /var/lib/sync\n"
)
"""The end of the demo log, the part a person opens a log for."""


def _log_bytes() -> bytes:
    """2,600,000 bytes of sync log: routine lines, then the incident at the very end."""
    room = LOG_BYTES - len(LOG_INCIDENT)
    lines, size, n = [], 0, 0
    while True:
        line = (
            f"2026-03-05T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z INFO sync "
            f"request={n:06d} mailbox=adelev items={n % 50} elapsed_ms={(n * 7) % 900}\n"
        )
        if size + len(line) > room:
            break
        lines.append(line)
        size += len(line)
        n += 1
    return ("".join(lines).ljust(room, "\n") + LOG_INCIDENT).encode("ascii")


def _notes_10001() -> str:
    source = (
        "Notes de réunion à Tōkyō — 会議メモ. Prochaine étape: le budget 2027 und die "
        "Einführung in München 🎉. "
    )
    return (source * (10_001 // len(source) + 1))[:10_001]


def build_personal_drive() -> Drive:
    drive = Drive(
        id=ids.drive_id("adelev"),
        name="OneDrive",
        drive_type="business",
        owner=ME,
        owner_id=ids.guid("user:" + ME[1]),
        web_root="https://contoso-my.sharepoint.com/personal/adelev_contoso_onmicrosoft_com/Documents",
        download_root="https://contoso-my.sharepoint.com/personal/adelev_contoso_onmicrosoft_com/_layouts/15/download.aspx",
    )
    root = DriveItem(
        id=ids.drive_item_id("adelev:root"),
        name="root",
        parent_id=None,
        created=datetime(2025, 6, 1, 9, 0, tzinfo=UTC),
        modified=DEMO_NOW - timedelta(hours=2),
        author=ME,
        is_folder=True,
        guid=ids.guid("adelev:root"),
    )
    drive.add(root)
    drive.root_id = root.id
    d = _DriveBuilder(drive, "adelev")
    for name in (
        "Documents",
        "Projects",
        "Photos",
        "Notebooks",
        "Recordings",
        "Attachments",
        "Microsoft Teams Chat Files",
        "Archive 2025",
    ):
        d.folder("/" + name)
    d.folder("/Documents/Reports")
    d.folder("/Documents/Reports/2026")
    d.folder("/Projects/Contoso Launch")
    d.folder("/Projects/Budget 2027")

    def text(path: str, content: str, mime: str = "text/plain", **kw: Any) -> None:
        data, body = _text_file(content)
        d.file(path, mime, data, text=body, **kw)

    budget_text = " ".join(SENTENCES["budget"])
    launch_text = " ".join(SENTENCES["launch"])
    d.file(
        "/Documents/Q1 Budget Review.docx",
        DOCX,
        budget_review_docx,
        text="Q1 Budget Review " + budget_text,
    )
    d.file(
        "/Budget 2027 draft.xlsx",
        XLSX,
        budget_model_xlsx,
        text="Budget 2027 Retail stores Marketing Cloud services Travel Training Inflation "
        "Headcount growth",
    )
    d.file(
        "/Projects/Budget 2027/Budget 2027 model.xlsx",
        XLSX,
        budget_model_xlsx,
        text="Budget 2027 Retail stores Marketing Cloud services Travel Training",
    )
    d.file(
        "/Contoso Launch plan.docx",
        DOCX,
        functools.partial(docbuild.docx, "Contoso Launch plan", SENTENCES["launch"]),
        text="Contoso Launch plan " + launch_text,
    )
    d.file(
        "/Projects/Contoso Launch/Launch deck.pptx",
        PPTX,
        launch_deck_pptx,
        text="Contoso Launch kickoff Goals Timeline Risks " + " ".join(SENTENCES["launch"][:3]),
    )
    d.file(
        "/Projects/Contoso Launch/Press release draft.docx",
        DOCX,
        functools.partial(docbuild.docx, "Press release draft", SENTENCES["launch"][1:5]),
        text="Press release draft " + " ".join(SENTENCES["launch"][1:5]),
    )
    d.file(
        "/Documents/Contract – Fabrikam MSA.pdf",
        PDF,
        contract_pdf,
        text="Master Services Agreement Contoso Fabrikam consulting services term fees "
        "confidentiality termination governing law",
    )
    d.file(
        "/Résumé Adèle Vance.pdf",
        PDF,
        functools.partial(
            docbuild.pdf,
            "Adele Vance - Resume",
            [
                "Retail Manager, Contoso (2021 - today)",
                "Led the loyalty programme to 200,000 members.",
                "Education: University of Washington",
            ],
        ),
        text="Adele Vance Resume Retail Manager Contoso loyalty programme University of Washington",
    )
    d.file(
        "/Documents/Quarterly business review.pptx",
        PPTX,
        functools.partial(
            docbuild.pptx,
            [
                ("Quarterly business review", ["Q4 2025 results"]),
                ("Highlights", plain(SENTENCES["product"][:3])),
            ],
        ),
        text="Quarterly business review Q4 2025 results Highlights "
        + " ".join(plain(SENTENCES["product"][:3])),
    )
    d.file(
        "/Projects/Budget 2027/Cost centres.pdf",
        PDF,
        functools.partial(
            docbuild.pdf,
            "Cost centres 2027",
            ["Retail stores: 120,000", "Marketing: 137,500", "Cloud services: 155,000"],
        ),
        text="Cost centres 2027 Retail stores Marketing Cloud services",
    )
    d.file(
        "/Documents/Reports/Monthly report – January 2026.docx",
        DOCX,
        functools.partial(
            docbuild.docx, "Monthly report - January 2026", plain(SENTENCES["product"])
        ),
        text="Monthly report January 2026 " + " ".join(plain(SENTENCES["product"])),
    )
    d.file(
        "/Documents/Reports/Sales report Q4 2025.xlsx",
        XLSX,
        functools.partial(
            docbuild.xlsx,
            [("Sales", [["Region", "Revenue"], ["Northwest", 1_250_000], ["Southwest", 980_000]])],
        ),
        text="Sales Region Revenue Northwest Southwest",
    )
    text(
        "/Documents/Reports/Report template.md",
        "# Report template\n\n## Summary\n\n## Numbers\n\n## Risks\n",
        "text/markdown",
    )
    text(
        "/Documents/Reports/2026/Q1 report draft.md",
        "# Q1 report draft\n\n"
        + budget_text
        + "\n\n"
        + " ".join(plain(SENTENCES["product"]))
        + "\n",
        "text/markdown",
    )
    text(
        "/Documents/Reports/2026/Q1 budget vs actuals.csv",
        "cost centre,plan,actual\nRetail stores,120000,123250\nMarketing,137500,131000\n"
        "Travel,172500,162750\n",
        "text/csv",
    )
    d.file(
        "/Documents/Reports/2026/Report chart.png",
        PNG,
        functools.partial(docbuild.png, 240, 160, 5),
    )
    text("/Documents/Notes de réunion – Tōkyō.txt", _notes_10001())
    text(
        "/Documents/Budget 2027 – assumptions.csv",
        "assumption,value\ninflation,3.1%\nheadcount growth,4 FTE\ntravel,flat\n",
        "text/csv",
    )
    text(
        "/Documents/launch-checklist.json",
        json.dumps(
            {
                "launch": "Contoso Launch",
                "date": "2026-04-14",
                "items": [
                    {"task": s, "done": n % 2 == 0} for n, s in enumerate(SENTENCES["launch"])
                ],
            },
            ensure_ascii=False,
            indent=2,
        ),
        "application/json",
    )
    d.file(
        "/Documents/Hotel confirmation.eml",
        "message/rfc822",
        hotel_eml,
        text="Reservation confirmed " + HOTEL_TEXT,
    )
    text(
        "/Documents/forecast.py",
        '"""Budget 2027 forecast."""\n\nGROWTH = 0.031\n\n\n'
        "def forecast(plan: float) -> float:\n    return plan * (1 + GROWTH)\n",
        "text/x-python",
    )
    text(
        "/Projects/Contoso Launch/Launch plan.md",
        "# Launch plan\n\n" + "\n".join(f"- {s}" for s in SENTENCES["launch"]) + "\n",
        "text/markdown",
    )
    text(
        "/Projects/Contoso Launch/launch-timeline.csv",
        "milestone,date\npress review,2026-03-20\npartner preview,2026-03-31\nlaunch,2026-04-14\n",
        "text/csv",
    )
    text("/Projects/Budget 2027/Budget notes.txt", budget_text + "\n")
    text(
        "/Projects/Project overview.md",
        "# Projects\n\n- Budget 2027\n- Contoso Launch\n",
        "text/markdown",
    )
    for n in range(3):
        d.file(
            f"/Photos/Store opening {n + 1}.png",
            PNG,
            functools.partial(docbuild.png, 160, 120, 20 + n),
        )
    d.file(
        "/server.log", "text/plain", _log_bytes, text="sync request mailbox adelev", size=2_600_000
    )
    text(
        "/Project #42 notes.md",
        "# Project #42\n\nA name with a hash and spaces.\n",
        "text/markdown",
    )
    text("/Café menu – février.txt", "Café crème 3,20 €\nCroissant 2,10 €\nThé vert 2,80 €\n")
    text("/sync_inbox.py", "import time\n\nwhile True:\n    time.sleep(60)\n", "text/x-python")
    d.file("/Org chart.png", PNG, functools.partial(docbuild.png, 200, 140, 9))
    text("/settings.json", '{"theme": "dark", "language": "en-US"}\n', "application/json")
    text(
        "/Team contacts.csv",
        "name,email\n" + "".join(f"{PEOPLE[s][0]},{PEOPLE[s][1]}\n" for s in STAFF),
        "text/csv",
    )
    text("/Reading list.txt", "The Goal\nGood Strategy Bad Strategy\nThe Mythical Man-Month\n")
    text(
        "/Launch announcement draft.md",
        "# We are launching!\n\n" + launch_text + "\n",
        "text/markdown",
    )
    text(
        "/会議メモ 2026-03.txt",
        "東京オフィスの会議メモ。新製品の発売計画と予算について話し合いました。\n",
    )
    start = datetime(2026, 1, 5, tzinfo=UTC)
    for n in range(40):
        day = start + timedelta(days=7 * (n // 5) + n % 5)
        topic = ["budget", "launch", "meeting", "product", "hiring"][n % 5]
        body = (
            f"# Standup {day:%Y-%m-%d}\n\n"
            + "\n".join(f"- {s}" for s in SENTENCES[topic][:3])
            + "\n"
        )
        text(
            f"/Standup notes {day:%Y-%m-%d}.md",
            body,
            "text/markdown",
            days_ago=(DEMO_NOW - day).days,
        )
    return drive


def build_marketing_drive() -> Drive:
    """A SharePoint document library, for shared-library reads."""
    owner: Recipient = ("Marketing Team", f"marketing@{DOMAIN}")
    drive = Drive(
        id=ids.drive_id("marketing"),
        name="Documents",
        drive_type="documentLibrary",
        owner=owner,
        owner_id=ids.guid("group:marketing"),
        web_root="https://contoso.sharepoint.com/sites/Marketing/Shared%20Documents",
        download_root="https://contoso.sharepoint.com/sites/Marketing/_layouts/15/download.aspx",
    )
    root = DriveItem(
        id=ids.drive_item_id("marketing:root"),
        name="root",
        parent_id=None,
        created=datetime(2025, 1, 15, 9, 0, tzinfo=UTC),
        modified=DEMO_NOW - timedelta(days=1),
        author=PEOPLE["megan"],
        is_folder=True,
        guid=ids.guid("marketing:root"),
    )
    drive.add(root)
    drive.root_id = root.id
    d = _DriveBuilder(drive, "marketing")
    d.folder("/Press kit")
    d.folder("/Campaigns")
    d.file(
        "/Brand guidelines.pdf",
        PDF,
        functools.partial(
            docbuild.pdf,
            "Contoso brand guidelines",
            ["Use the Contoso blue for headlines.", "Logos need clear space on every side."],
        ),
        text="Contoso brand guidelines Contoso blue headlines logos clear space",
        author=PEOPLE["megan"],
    )
    d.file(
        "/Campaign calendar.xlsx",
        XLSX,
        functools.partial(
            docbuild.xlsx,
            [
                (
                    "Calendar",
                    [
                        ["Campaign", "Start"],
                        ["Spring launch", "2026-04-14"],
                        ["Summer sale", "2026-06-20"],
                    ],
                )
            ],
        ),
        text="Campaign calendar Spring launch Summer sale",
        author=PEOPLE["megan"],
    )
    d.file(
        "/Press kit/Press release – Contoso Launch.docx",
        DOCX,
        functools.partial(docbuild.docx, "Press release - Contoso Launch", SENTENCES["launch"][:4]),
        text="Press release Contoso Launch " + " ".join(SENTENCES["launch"][:4]),
        author=PEOPLE["miriam"],
    )
    d.file(
        "/Press kit/Product photos.png",
        PNG,
        functools.partial(docbuild.png, 300, 200, 31),
        author=PEOPLE["diego"],
    )
    for n, name in enumerate(["Spring launch brief.md", "Social posts.txt", "Influencer list.csv"]):
        content = f"{name}\n\n" + " ".join(SENTENCES["launch"][n : n + 3]) + "\n"
        data, body = _text_file(content)
        d.file(f"/Campaigns/{name}", "text/plain", data, text=body, author=PEOPLE["megan"])
    return drive


def build_tenant() -> Tenant:
    """A fresh demo tenant: the same data every time, nothing shared between calls."""
    rng = random.Random(20260306)
    adele = build_adele(rng)
    support = build_support(random.Random(20260307))
    personal = build_personal_drive()
    marketing = build_marketing_drive()
    mailboxes: dict[str, Mailbox] = {}
    for mailbox in (adele, support):
        for key in (mailbox.user_id, mailbox.mail.lower(), mailbox.upn.lower()):
            mailboxes[key] = mailbox
    mailboxes["me"] = adele
    return Tenant(
        mailboxes=mailboxes,
        drives={personal.id: personal, marketing.id: marketing},
        personal_drive={adele.user_id: personal.id},
        me=adele.user_id,
    )
