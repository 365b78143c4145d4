"""The demo's conversations: a 14-message thread, shorter threads, sent mail and drafts.

Each reply names its parent in In-Reply-To and References and keeps the subject with a
``Re:`` prefix, so it joins its thread by Gmail's own rules when filed.
"""

from __future__ import annotations

from mfconnector.gmail_emulator.demo_build import DemoWriter
from mfconnector.gmail_emulator.demo_cast import ME, PEOPLE, at
from mfconnector.gmail_emulator.store import Draft, Message

__all__ = ["write_sent_and_drafts", "write_threads"]


def _long_thread(w: DemoWriter, project: str) -> None:
    """Fourteen messages, replies both ways, the last three unread."""
    lines = [
        ("megan", "Here is the agenda for the Q4 roadmap review. Please add your items."),
        ("me", "Thanks Megan. I added the migration timeline and the budget question."),
        ("alex", "Can we move the review to Thursday? The design team is out on Wednesday."),
        ("megan", "Thursday works. Same room, 10:00."),
        ("me", "Confirmed. I will bring the updated milestones."),
        ("alex", "Attached the latest mock-ups; the navigation changed a lot."),
        ("megan", "The mock-ups look good. One concern: the search page is too dense."),
        ("me", "Agreed, let us simplify the filters and keep three at most."),
        ("alex", "Updated the search page with three filters. Better?"),
        ("megan", "Much better. Approved from my side."),
        ("me", "Great. I will write up the decisions and send them round."),
        ("alex", "Small correction: the launch date is 15 January, not 12."),
        ("megan", "Noted, thanks Alex. Final minutes to follow."),
        ("alex", "Reminder: the minutes are still missing the budget numbers."),
    ]
    parent: Message | None = None
    for index, (who, text) in enumerate(lines):
        mine = who == "me"
        sender = ME if mine else PEOPLE[who]
        to = [PEOPLE["megan"], PEOPLE["alex"]] if mine else [ME]
        labels = ["SENT"] if mine else ["INBOX", "CATEGORY_PERSONAL", "IMPORTANT"]
        labels.append(project)
        if not mine and index >= len(lines) - 3:
            labels.append("UNREAD")
        subject = "Q4 roadmap review" if parent is None else "Re: Q4 roadmap review"
        parent = w.file(
            labels,
            at(20 - index, 8 + index % 9),
            sender=sender,
            to=to,
            subject=subject,
            text=f"{text}\n\n-- \n{sender.split(' <')[0]}",
            parent=parent,
        )


def _thread(
    w: DemoWriter, subject: str, turns: list[tuple[str, str]], start: float, labels: list[str]
) -> Message:
    parent: Message | None = None
    for index, (who, text) in enumerate(turns):
        mine = who == "me"
        filed = ["SENT", *labels] if mine else ["INBOX", "CATEGORY_PERSONAL", *labels]
        parent = w.file(
            filed,
            at(start - index * 0.7, 10 + index),
            sender=ME if mine else PEOPLE[who],
            to=[PEOPLE[turns[0][0]] if mine else ME],
            subject=subject if parent is None else f"Re: {subject}",
            text=text,
            parent=parent,
        )
    assert parent is not None
    return parent


def write_threads(w: DemoWriter, ids: dict[str, str]) -> Message:
    """All the threads; returns the last message of the one a draft replies to."""
    _long_thread(w, ids["Projects/Contoso"])
    _thread(
        w,
        "Budget sign-off",
        [
            ("nestor", "Can you sign off the budget today?"),
            ("me", "Signed off."),
            ("nestor", "Thanks, received."),
        ],
        19,
        [ids["Finance"]],
    )
    _thread(
        w,
        "Offsite venue",
        [
            ("megan", "Two options: the lake house or the city hotel."),
            ("me", "The lake house, please."),
            ("megan", "Booked!"),
            ("alex", "Is there parking?"),
        ],
        17,
        [ids["Projects"]],
    )
    _thread(
        w,
        "Flight to Lisbon",
        [("zoe", "Found flights on the 12th."), ("me", "Book the morning one.")],
        15,
        [ids["Travel"]],
    )
    _thread(
        w,
        "Dinner on Saturday?",
        [
            ("mum", "Dinner at ours on Saturday?"),
            ("me", "Yes, 7pm?"),
            ("mum", "Perfect, see you then."),
        ],
        9,
        [ids["Family"]],
    )
    review = _thread(
        w,
        "Security review findings",
        [
            ("lee", "The review found two medium issues."),
            ("me", "Can you share the details?"),
            ("lee", "Details are in the tracker, item 88."),
        ],
        7,
        [ids["Projects/Fabrikam"]],
    )
    _thread(
        w,
        "Expense report October",
        [("bank", "Your card was charged 84.00 EUR."), ("me", "Forwarded to accounting.")],
        22,
        [ids["Finance"]],
    )
    _thread(
        w,
        "Printer on floor 3",
        [
            ("alex", "The printer is jammed again."),
            ("me", "IT is on it."),
            ("alex", "Fixed now, thanks."),
        ],
        5,
        [],
    )
    return review


def write_sent_and_drafts(w: DemoWriter, ids: dict[str, str], reply_to: Message) -> None:
    box = w.mailbox
    w.file(
        ["SENT"],
        at(4, 16),
        sender=ME,
        to=[PEOPLE["mum"]],
        subject="Sunday lunch",
        text="Shall we have lunch on Sunday? I can bring dessert.",
    )
    w.file(
        ["SENT", ids["Travel"]],
        at(16),
        sender=ME,
        to=[PEOPLE["zoe"]],
        subject="Train tickets to Lyon",
        text="I booked the 8:04 train; seats 41 and 42.",
    )
    reply = w.file(
        ["DRAFT"],
        at(0.2, 8),
        sender=ME,
        to=[PEOPLE["lee"]],
        subject=f"Re: {reply_to.parsed.header('Subject').removeprefix('Re: ')}",
        text="Thanks Lee, I will review it by Friday.",
        parent=reply_to,
    )
    fresh = w.file(
        ["DRAFT"],
        at(0.1, 8),
        sender=ME,
        to=[PEOPLE["megan"]],
        subject="Ideas for 2027",
        text="Some first thoughts:\n- fewer meetings\n- a team offsite",
    )
    for number, message in enumerate((reply, fresh), start=1):
        draft = Draft(f"r{1_000_000 + number}", message.id)
        box.drafts[draft.id] = draft
