"""multi_gpu/peer_store.cu's exchange on four GPUs, in one launch: every GPU keeps an area
of two banks of kMostPeerGpus 8-byte slots (peer_store.hpp); in launch L the finishing
block's thread p stores the word {tag L, partial} into slot `rank` of bank L mod 2 on
GPU p over NVLink, then polls slot p of its own bank until the tag reads L; thread 0 adds
the partials in rank order. The other bank still holds the words of launch L - 1."""

FIGURE = "peer_store_exchange.png"
ABOUT = "chapter 26: the peer-store exchange, two banks of tagged slots on every GPU"

HEADER = "multi_gpu/peer_store.hpp"
SOURCE = "multi_gpu/peer_store.cu"
GPUS = 4  # GPUs drawn
LAUNCH = 5  # the launch drawn (odd: bank 1)
SENDER = 1  # the GPU whose stores are drawn as arrows


def inputs(dg, root, results):
    slots = dg.code_constant(root, HEADER, "kMostPeerGpus")
    banks = dg.code_constant(root, HEADER, "kPeerAreaWords", {"kMostPeerGpus": slots}) // slots
    if banks != 2:
        raise dg.DiagramError(f"{HEADER}: the figure draws two banks (a launch's parity), not {banks}.")
    bank = dg.require_line(root, SOURCE, r"const std::size_t bank = \(launch & 1\) \* kMostPeerGpus;")
    store = dg.require_line(root, SOURCE,
                            r"store_sys\(view\.areas\[p\] \+ bank \+ view\.rank, peer_word\(launch, mine\)\);")
    poll = dg.require_line(root, SOURCE, r"const unsigned long long\* slot = view\.areas\[view\.rank\] \+ bank \+ p;")
    dg.require_line(root, SOURCE, r"<< 32\) \| __float_as_uint\(v\);")  # the tag in the high half
    dg.require_line(root, SOURCE, r"for \(int r = 1; r < view\.count; \+\+r\) sum \+= partial_of\[r\];")
    if GPUS > slots:
        raise dg.DiagramError(f"the figure draws {GPUS} GPUs but the exchange takes at most {slots}.")
    return {"slots": slots, "banks": banks, "gpus": GPUS, "launch": LAUNCH, "sender": SENDER,
            "bank": bank, "store": store, "poll": poll}


def draw(dg, plt, d):
    g, slots, launch, sender = d["gpus"], d["slots"], d["launch"], d["sender"]
    current = launch % d["banks"]
    left, col, cell = 6.2, 12.0, 1.32
    width = left + g * col + 0.4
    c = dg.Canvas(plt, width, 21.5, 0.27)
    colours = [dg.BLUE, dg.ORANGE, dg.GREEN, dg.PURPLE, dg.SKY, dg.VERMILLION, dg.YELLOW, dg.GREY]
    c.text(0.4, 0.8, f"The peer-store exchange, launch L = {launch} on {g} GPUs: GPU {sender}'s stores drawn "
           f"(every GPU makes the same)", size=10, ha="left", weight="bold")
    c.code(0.4, 1.8, d["bank"], size=7, color=dg.GREY)
    c.code(0.4, 2.6, d["store"], size=7, color=dg.GREY)
    c.code(0.4, 3.4, d["poll"], size=7, color=dg.GREY)

    y_gpu, y_part, y_bank = 4.6, 6.0, [9.4, 11.4]  # rows: the current bank first
    rows = [current, 1 - current]
    c.text(left - 0.3, y_part + 0.6, "finishing block", size=7.5, ha="right")
    for i, b in enumerate(rows):
        label = f"bank {b} = L mod 2" if b == current else f"bank {b}: launch {launch - 1}'s words"
        c.text(left - 0.3, y_bank[i] + cell / 2, label, size=7.5, ha="right",
               weight="bold" if b == current else "normal")
    centre = {}
    for k in range(g):
        x = left + k * col
        colour = colours[k % len(colours)]
        c.box(x, y_gpu, slots * cell, 1.0, face="white", edge=colour, lw=1.2, text=f"GPU {k}", size=8, color=colour)
        c.box(x + slots * cell / 2 - 2.6, y_part, 5.2, 1.2, face=colour, edge=colour, text=f"partial p{k}",
              size=7.5, color="white")
        centre[k] = x + slots * cell / 2
        for i, b in enumerate(rows):
            tag = launch if b == current else launch - 1
            for s in range(slots):
                sx = x + s * cell
                if s >= g:
                    c.box(sx, y_bank[i], cell, cell, face=dg.PALE, edge=dg.GREY, lw=0.5)
                elif s == k:
                    c.box(sx, y_bank[i], cell, cell, face="white", edge=dg.GREY, lw=0.5, text="0", size=6,
                          color=dg.GREY)
                else:
                    mine = b == current and s == sender
                    c.box(sx, y_bank[i], cell, cell, face="white", edge=colours[s % len(colours)],
                          lw=1.8 if mine else 0.7, text=f"{tag}|p{s}", size=6.2,
                          color=dg.INK if b == current else dg.GREY, weight="bold" if mine else "normal")
            for s in range(slots):
                c.text(x + (s + 0.5) * cell, y_bank[i] + cell + 0.35, str(s), size=6, color=dg.GREY)
    # GPU `sender`'s stores: into slot `sender` of the current bank on every other GPU.
    y_top = y_bank[0]
    for k in range(g):
        if k == sender:
            continue
        tx = left + k * col + (sender + 0.5) * cell
        c.arrow(centre[sender], y_part + 1.2, tx, y_top, color=colours[sender], lw=1.1, head=5)
    c.text(centre[sender] + 2.9, y_part + 0.6, f"st.relaxed.sys over NVLink:\none 8-byte word {{tag L, p{sender}}}",
           size=6.8, ha="left", color=colours[sender])
    # Polling, then the rank-order sum.
    y = 14.4
    c.text(left, y, f"Thread p of every GPU polls slot p of its own bank {current} until the tag reads {launch} "
           f"(ld.relaxed.sys); slots {g} to {slots - 1} are unused, and a GPU's own slot stays 0.",
           size=7.5, ha="left")
    for k in range(g):
        x = left + k * col
        terms = " + ".join(f"p{j}" for j in range(g))
        c.box(x, y + 1.2, slots * cell, 1.2, face="white", edge=dg.INK, text=f"thread 0: {terms}", size=7)
    c.text(left, y + 3.4, "The same partials added in the same order: the same bits on every GPU.", size=7.5,
           ha="left")
    c.text(left, y + 4.4, f"Bank {1 - current} is written again in launch {launch + 1}: a GPU starts it only after "
           f"finishing launch {launch}, which needed every peer's word of {launch}, sent after that peer had read "
           f"bank {1 - current} in launch {launch - 1}.", size=7.5, ha="left")
    c.text(left, y + 5.4, f"So a slot is never overwritten before it is read; until a peer's word of {launch} "
           f"arrives, its slot in bank {current} holds launch {launch - 2}'s word, whose tag differs.", size=7.5,
           ha="left")
    return c
