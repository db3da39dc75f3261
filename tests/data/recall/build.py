#!/usr/bin/env python3
"""Builds the recall benchmark's conversations (c*.json) from the sources in src/.

A source is hand-written: its sessions, the turns that carry facts (and some that only look
like they do), and the questions with the keys of their evidence turns. `~ N` lines ask for
N routine turns (unit conversions, drafts, recipes, trivia ...), drawn from the pools below
with a fixed seed, so a build is reproducible and the committed JSON is what the benchmark
reads. Run `python3 tests/data/recall/build.py` after editing a source; `--check` also
prints each paraphrase question's content words shared with its evidence.

Source format:
    id: c1                      conversation id
    lang: en | zh | mixed       language of the conversation (and its filler pool)
    title: ...                  one line for people
    == 2024-01-08               a new session and its date
    U: text  /  U[key]: text    the user's message (key: for questions to point at)
    A: text                     the assistant's reply to the preceding U
    ~ 12                        twelve routine turns
    ? category | lang | question | key key | answer
"""

import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

NAMES_EN = ["Priya", "Marcus", "Helen", "Tomasz", "Keiko", "Rafael", "Sven", "Dana", "Omar",
            "Lucy", "Grace", "Felix", "Nadia", "Ben", "Carmen", "Victor", "Aisha", "Pete"]
CITIES = ["Denver", "Lyon", "Osaka", "Toronto", "Cape Town", "Lima", "Oslo", "Austin",
          "Krakow", "Melbourne", "Porto", "Nairobi", "Vancouver", "Dublin"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
DISHES = ["shakshuka", "mushroom risotto", "chicken tikka masala", "lentil soup",
          "fish tacos", "pad thai", "ratatouille", "beef chili", "miso salmon",
          "spinach lasagna", "banana bread", "black bean burgers", "minestrone",
          "lemon roast chicken", "vegetable curry", "carbonara"]
BOOKS = [("The Overstory", "Richard Powers"), ("Middlemarch", "George Eliot"),
         ("Sapiens", "Yuval Noah Harari"), ("The Remains of the Day", "Kazuo Ishiguro"),
         ("Atomic Habits", "James Clear"), ("Dune", "Frank Herbert"),
         ("Educated", "Tara Westover"), ("The Road", "Cormac McCarthy"),
         ("Thinking, Fast and Slow", "Daniel Kahneman"), ("Pachinko", "Min Jin Lee")]
WORDS = ["ubiquitous", "ephemeral", "sanguine", "laconic", "obfuscate", "pragmatic",
         "serendipity", "quixotic", "meticulous", "candor", "resilient", "tenuous"]
TOPICS = ["why the sky is blue", "how vaccines train the immune system",
          "how a bill becomes law in the US", "what causes inflation",
          "how noise-cancelling headphones work", "why leaves change color in autumn",
          "how compound interest works", "what a black hole is",
          "how GPS figures out your position", "why bread dough rises",
          "how tides work", "what the gut microbiome does", "how credit scores are computed",
          "why we have leap years", "how solar panels make electricity"]
SPREAD = ["VLOOKUP", "conditional formatting", "a pivot table", "SUMIFS", "data validation",
          "a running total", "freeze panes", "XLOOKUP"]
CODE = [("reverse a string", "Python", "s[::-1]"),
        ("remove duplicates from a list while keeping order", "Python", "list(dict.fromkeys(items))"),
        ("count lines in a file", "bash", "wc -l file.txt"),
        ("find files larger than 100 MB", "bash", "find . -size +100M"),
        ("get today's date as YYYY-MM-DD", "JavaScript", "new Date().toISOString().slice(0, 10)"),
        ("rename all .jpeg files to .jpg", "bash", "for f in *.jpeg; do mv \"$f\" \"${f%.jpeg}.jpg\"; done"),
        ("select the 5 most recent orders", "SQL", "SELECT * FROM orders ORDER BY created_at DESC LIMIT 5"),
        ("undo the last git commit but keep the changes", "git", "git reset --soft HEAD~1"),
        ("merge two dictionaries", "Python", "{**a, **b}"),
        ("check which process uses port 8080", "bash", "lsof -i :8080")]


def en_filler(r):
    name, name2 = r.sample(NAMES_EN, 2)
    n = r.randint(2, 95)
    city = r.choice(CITIES)
    day = r.choice(DAYS)
    dish = r.choice(DISHES)
    book, author = r.choice(BOOKS)
    word = r.choice(WORDS)
    topic = r.choice(TOPICS)
    feat = r.choice(SPREAD)
    task, lang, code = r.choice(CODE)
    pct = r.randint(5, 30)
    t = r.randint(0, 31)
    if t == 0:
        return (f"How many ounces is {n * 10} grams?",
                f"{n * 10} grams is about {n * 10 / 28.35:.1f} ounces.")
    if t == 1:
        return (f"What's {pct}% of {n * 17}?",
                f"{pct}% of {n * 17} is {n * 17 * pct / 100:g}.")
    if t == 2:
        return (f"Can you draft a short email to {name} moving our call to {day} afternoon?",
                f"Sure: \"Hi {name}, would it be possible to move our call to {day} afternoon? "
                f"Something came up on my side. Let me know what time suits you. Thanks!\"")
    if t == 3:
        return (f"Give me a quick weeknight recipe for {dish}.",
                f"Here's a 30-minute version of {dish}: prep the vegetables first, cook the base "
                f"on medium heat, season at the end and taste before serving. Want a shopping list?")
    if t == 4:
        return (f"What does '{word}' mean?",
                f"'{word.capitalize()}' is an adjective or noun depending on use; I can give you "
                f"a definition and two example sentences if you like.")
    if t == 5:
        return (f"Explain {topic} in two sentences.",
                f"Short version of {topic}: it comes down to a simple mechanism plus a few "
                f"side effects. I can go deeper or give an analogy if that helps.")
    if t == 6:
        return (f"How do I use {feat} in Google Sheets?",
                f"For {feat}, select your range, open the Data or Format menu as needed, and "
                f"follow the prompts; I can write the exact formula if you tell me your columns.")
    if t == 7:
        return (f"How do I {task} in {lang}?",
                f"In {lang} you can use: {code}")
    if t == 8:
        return (f"Summarize {book} in a paragraph.",
                f"{book} by {author} follows its central characters through a long arc of change; "
                f"the book is mostly about memory, choice and consequence. Want themes or quotes?")
    if t == 9:
        return (f"What time is it in {city} when it's 3pm in London?",
                f"That depends on daylight saving on both sides; right now {city} is a few hours "
                f"off London, so I'd double-check with a world clock for the exact date.")
    if t == 10:
        return (f"Rewrite this to sound friendlier: 'Send me the numbers by {day}.'",
                f"\"Could you send me the numbers by {day}? That would really help, thanks!\"")
    if t == 11:
        return ("Any tips to fall asleep faster?",
                "Keep a consistent bedtime, dim screens an hour before, keep the room cool, and "
                "if you're awake after 20 minutes get up and do something calm until you're sleepy.")
    if t == 12:
        return (f"Translate 'where is the train station' into {r.choice(['French', 'Spanish', 'German', 'Italian'])}.",
                "Here you go, plus the polite way to ask a stranger first.")
    if t == 13:
        return (f"Is {n} a prime number?",
                f"{n} is {'prime' if all(n % d for d in range(2, int(n ** 0.5) + 1)) else 'not prime'}.")
    if t == 14:
        return (f"Suggest a name for a group chat with {name}, {name2} and me about board games.",
                "A few ideas: 'Meeple Mayhem', 'Roll for Snacks', 'The Dice Guys', 'Board Meeting'.")
    if t == 15:
        return ("What's a good stretch for a stiff neck from sitting all day?",
                "Try slow chin tucks and side tilts, 10 each, holding for a few seconds; "
                "if it's persistent or painful, see a professional.")
    if t == 16:
        return (f"Write a two-line thank-you note to {name} for the birthday gift.",
                f"\"Dear {name}, thank you so much for the thoughtful gift, it made my day. "
                f"I can't wait to use it!\"")
    if t == 17:
        return (f"How long should I boil an egg for a jammy yolk?",
                "About 6.5 minutes from boiling water, then straight into ice water.")
    if t == 18:
        return (f"Convert {n} miles per hour to km/h.",
                f"{n} mph is about {n * 1.609:.0f} km/h.")
    if t == 19:
        return (f"What's the difference between 'affect' and 'effect'?",
                "'Affect' is usually the verb (to influence), 'effect' usually the noun (the result).")
    if t == 20:
        return (f"Give me three icebreaker questions for a team meeting.",
                "1) What's a small win from last week? 2) Best thing you ate recently? "
                "3) If you could master one skill instantly, what would it be?")
    if t == 21:
        return (f"What's the capital of {r.choice(['Australia', 'Canada', 'Brazil', 'Turkey', 'Morocco', 'New Zealand', 'Vietnam'])}?",
                "That's a common trick question; the capital isn't the largest city. Here it is.")
    if t == 22:
        return (f"Make this sentence shorter: 'At this point in time we are not in a position to "
                f"offer a discount of {pct} percent.'",
                f"\"We can't offer a {pct}% discount right now.\"")
    if t == 23:
        return (f"How do I get a red wine stain out of a cotton shirt?",
                "Blot, don't rub; rinse from the back with cold water, then apply dish soap and "
                "hydrogen peroxide or a stain remover before washing.")
    if t == 24:
        return (f"Help me split a {n * 3 + 40} dollar dinner bill between {r.randint(3, 6)} people with a {pct}% tip.",
                "Add the tip to the total first, then divide evenly; I've done the math per person below.")
    if t == 25:
        return (f"Recommend a podcast about {r.choice(['history', 'economics', 'science', 'design', 'true crime', 'language learning'])}.",
                "A few well-reviewed ones, with a one-line pitch each so you can pick by mood.")
    if t == 26:
        return (f"What's the plural of '{r.choice(['cactus', 'octopus', 'syllabus', 'fungus', 'appendix'])}'?",
                "Both the Latin-style and the English -es plural are accepted; the English one is "
                "more common in everyday writing.")
    if t == 27:
        return (f"Write a haiku about {r.choice(['Monday mornings', 'rain on a window', 'cold coffee', 'a quiet office', 'autumn leaves'])}.",
                "Here's one in 5-7-5, with a slightly wistful tone.")
    if t == 28:
        return (f"Is it worth upgrading my phone if it's {r.randint(2, 5)} years old?",
                "If the battery and updates are fine, probably not; a battery replacement is a cheap "
                "middle ground. Upgrade if security updates have stopped.")
    if t == 29:
        return (f"What should I pack for a weekend in {city}?",
                f"Check the {city} forecast first; layers, comfortable shoes, a light rain jacket, "
                f"chargers and a small day bag cover most weekends.")
    if t == 30:
        return (f"Quick: {n} times {pct}?", f"{n * pct}.")
    return (f"Proofread: 'Their going to send the report to {name} tomorow.'",
            f"\"They're going to send the report to {name} tomorrow.\"")


NAMES_ZH = ["小王", "老张", "陈老师", "刘姐", "小赵", "周经理", "阿杰", "孙阿姨", "小林", "何总"]
CITIES_ZH = ["成都", "西安", "厦门", "青岛", "昆明", "南京", "长沙", "大理", "苏州", "哈尔滨"]
DISHES_ZH = ["番茄炒蛋", "红烧肉", "宫保鸡丁", "鱼香肉丝", "清蒸鲈鱼", "麻婆豆腐", "酸辣土豆丝",
             "可乐鸡翅", "蒜蓉西兰花", "糖醋排骨", "冬瓜排骨汤", "葱油拌面"]
IDIOMS = ["画蛇添足", "守株待兔", "亡羊补牢", "刻舟求剑", "对牛弹琴", "胸有成竹", "杯弓蛇影",
          "望梅止渴", "半途而废", "井底之蛙"]
TOPICS_ZH = ["为什么天空是蓝色的", "复利是怎么计算的", "地震是怎么形成的", "为什么会有四季",
             "疫苗的原理", "通货膨胀是什么", "光合作用的过程", "为什么飞机能飞起来",
             "潮汐是怎么回事", "信用卡免息期怎么算"]


def zh_filler(r):
    name = r.choice(NAMES_ZH)
    city = r.choice(CITIES_ZH)
    dish = r.choice(DISHES_ZH)
    idiom = r.choice(IDIOMS)
    topic = r.choice(TOPICS_ZH)
    n = r.randint(3, 90)
    pct = r.randint(5, 30)
    day = r.choice(["周一", "周二", "周三", "周四", "周五"])
    t = r.randint(0, 23)
    if t == 0:
        return (f"{dish}怎么做比较好吃？", f"{dish}的关键是火候和调味的顺序：先处理好食材，大火快炒或小火慢炖，最后再调味。需要详细步骤吗？")
    if t == 1:
        return (f"“{idiom}”是什么意思？", f"“{idiom}”是一个成语，有它的出处和比喻义，我可以给你讲讲典故再举两个例句。")
    if t == 2:
        return (f"帮我写一条消息给{name}，说会议改到{day}下午。", f"可以这样写：“{name}你好，原定的会议改到{day}下午了，时间方便的话请回复确认，谢谢！”")
    if t == 3:
        return (f"简单解释一下{topic}。", f"关于{topic}，简单说就是一个基本原理加上几个影响因素。要不要我用打比方的方式再讲一遍？")
    if t == 4:
        return (f"{n * 10}克等于多少斤？", f"{n * 10}克等于{n * 10 / 500:g}斤。")
    if t == 5:
        return (f"{n * 13}的{pct}%是多少？", f"{n * 13}的{pct}%是{n * 13 * pct / 100:g}。")
    if t == 6:
        return (f"周末去{city}玩两天，有什么推荐？", f"{city}两天的话，可以一天逛市区的老街和博物馆，一天去周边的景点，晚上尝尝当地小吃。需要我排个详细行程吗？")
    if t == 7:
        return ("晚上总是睡不着怎么办？", "可以试试固定作息、睡前一小时不看手机、卧室保持凉爽安静；如果长期失眠，建议去医院看看。")
    if t == 8:
        return (f"帮我把这句话改得礼貌一点：“你{day}之前把表发我。”", f"“麻烦你{day}之前把表格发给我，辛苦啦，谢谢！”")
    if t == 9:
        return ("Excel里怎么去掉重复值？", "选中数据区域，点“数据”选项卡里的“删除重复值”，勾选要比对的列就可以了。")
    if t == 10:
        return (f"推荐几本关于{r.choice(['历史', '心理学', '经济学', '写作', '科普'])}的入门书。", "给你推荐三本口碑不错的入门书，每本附一句话简介，你可以按兴趣挑。")
    if t == 11:
        return (f"{n}是质数吗？", f"{n}{'是' if all(n % d for d in range(2, int(n ** 0.5) + 1)) else '不是'}质数。")
    if t == 12:
        return ("衣服上的油渍怎么洗掉？", "先用洗洁精涂在油渍上揉一揉，静置十分钟，再用温水正常洗；真丝之类的面料建议干洗。")
    if t == 13:
        return (f"用英语怎么说“{r.choice(['我迟到了', '请再说一遍', '这个多少钱', '我订了房间', '下次再聊'])}”？", "给你一个常用说法和一个更口语的说法。")
    if t == 14:
        return (f"写一首关于{r.choice(['秋天', '下雨', '月亮', '故乡', '早晨'])}的短诗。", "写了一首四行的小诗，语气比较安静，你看看喜不喜欢。")
    if t == 15:
        return ("颈椎不舒服，有什么简单的拉伸动作？", "可以慢慢做低头、仰头和左右侧屈，每个动作保持十秒，做三组；如果疼痛明显，建议去医院看看。")
    if t == 16:
        return (f"给{name}的生日祝福怎么写比较走心？", f"可以结合你们一起经历的事来写，比如：“{name}，生日快乐！谢谢这一年的照顾，愿新的一岁一切顺利。”")
    if t == 17:
        return (f"{n}公里大概是多少英里？", f"{n}公里约等于{n * 0.621:.1f}英里。")
    if t == 18:
        return ("手机电池不耐用了，换电池还是换手机？", "如果系统还能更新、性能够用，换电池最划算；要是已经不再推送安全更新，可以考虑换新手机。")
    if t == 19:
        return (f"帮我算一下：{n * 9}块钱，{r.randint(3, 6)}个人AA，每人多少？", "我把每人应付的金额算好了，四舍五入到角。")
    if t == 20:
        return (f"“{r.choice(['的地得', '做作', '在再', '即既'])}”怎么区分？", "给你一个简单的判断方法和几个例句，记住规律就不容易用错了。")
    if t == 21:
        return ("Python里怎么把列表去重并保持顺序？", "可以用 list(dict.fromkeys(items))，既去重又保留原来的顺序。")
    if t == 22:
        return (f"{city}现在适合去旅游吗？", f"{city}这个季节整体还可以，出发前看一下天气预报，带件薄外套比较稳妥。")
    return ("给我讲个冷笑话。", "为什么数学书总是很忧郁？因为它有太多的问题。")


def mixed_filler(r):
    name = r.choice(["Jason", "Alvin", "Cheryl", "Wei Ling", "Ravi", "Mei", "Darren", "Siti"])
    n = r.randint(3, 90)
    pct = r.randint(5, 30)
    dish = r.choice(["laksa", "chicken rice", "char kway teow", "bak kut teh", "prawn mee", "nasi lemak"])
    t = r.randint(0, 17)
    if t == 0:
        return (f"帮我 draft 一个 email 给 {name}，说 meeting 改到 Thursday。", f"Sure: \"Hi {name}, just a heads-up that our meeting is moved to Thursday. Same time, same link. Thanks!\"")
    if t == 1:
        return (f"{n} SGD 大概多少人民币？", f"按最近的汇率，{n} SGD 大约是 {n * 5.3:.0f} 人民币，具体以银行牌价为准。")
    if t == 2:
        return (f"{dish} 哪家好吃？", f"{dish} 的话 hawker centre 里就有很多不错的，我可以按你住的区推荐几家。")
    if t == 3:
        return ("这个 sentence 帮我 polish 一下：'We will revert back to you soon.'", "'We'll get back to you soon.' — 'revert back' 在 native speaker 听来有点怪。")
    if t == 4:
        return (f"{pct}% of {n * 11} 是多少？", f"{n * 11 * pct / 100:g}。")
    if t == 5:
        return ("怎么在 Excel 里做 pivot table？", "选中数据，Insert → PivotTable，然后把字段拖到 Rows、Columns 和 Values 就行。")
    if t == 6:
        return ("推荐一个 podcast 听听，commute 的时候用。", "看你喜欢什么类型：tech、商业还是 history？我各推荐一个。")
    if t == 7:
        return ("晚上睡不好，有什么 tips？", "固定作息、睡前少看手机、房间凉一点；caffeine 下午两点以后就别喝了。")
    if t == 8:
        return (f"帮我写个 WhatsApp message 给 {name}，谢谢他帮忙搬东西。", f"\"Hey {name}, thanks a lot for helping with the move today! 改天请你吃饭 🙏\"")
    if t == 9:
        return ("git 里怎么 undo 上一个 commit 但保留改动？", "用 git reset --soft HEAD~1，改动会留在 staging area。")
    if t == 10:
        return (f"{n} km 跑步大概消耗多少 calories？", f"粗略算，体重 70kg 左右的话每公里约 70 kcal，{n} km 大概 {n * 70} kcal。")
    if t == 11:
        return ("'Affect' 和 'effect' 怎么区分？", "一般 affect 是动词（影响），effect 是名词（效果、结果）。")
    if t == 12:
        return ("给我三个 team meeting 的 icebreaker。", "1) 上周一个 small win？2) 最近吃过最好吃的东西？3) 如果能瞬间学会一个 skill，选什么？")
    if t == 13:
        return (f"Is {n} a prime number? 顺便解释一下怎么判断。", f"{n} {'is' if all(n % d for d in range(2, int(n ** 0.5) + 1)) else 'is not'} prime；判断方法是试除到平方根。")
    if t == 14:
        return ("手机 storage 快满了，怎么清理？", "先看哪些 app 占空间最多，清 cache，照片备份到 cloud 后删掉本地的，聊天记录里的视频也很占地方。")
    if t == 15:
        return ("用 Python 怎么 reverse 一个 string？", "s[::-1] 就可以了。")
    if t == 16:
        return (f"周末想带家人去 {r.choice(['Sentosa', 'Jewel', 'Gardens by the Bay', 'East Coast Park', 'the zoo'])}，要注意什么？", "避开中午最热的时候，带水和防晒；周末人多，最好早点出门。")
    return ("讲个 joke 吧。", "Why did the developer go broke? Because he used up all his cache. 😄")


FILLERS = {"en": en_filler, "zh": zh_filler, "mixed": mixed_filler}
# A mixed conversation's routine turns are half in English.
POOLS = {"en": ["en"], "zh": ["zh"], "mixed": ["mixed", "mixed", "en"]}


def parse(path):
    conv = {"sessions": [], "questions": []}
    keys = {}
    pending = None
    filler_count = 0
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name}:{n}"
        if line.startswith("== "):
            conv["sessions"].append({"date": line[3:].strip(), "items": []})
        elif m := re.match(r"^U(?:\[([\w-]+)\])?:\s*(.+)$", line):
            if pending is not None:
                sys.exit(f"{where}: user line without a reply before it")
            pending = {"key": m.group(1), "user": m.group(2).replace("\\n", "\n")}
        elif line.startswith("A:"):
            if pending is None:
                sys.exit(f"{where}: reply without a user line")
            pending["assistant"] = line[2:].strip().replace("\\n", "\n")
            conv["sessions"][-1]["items"].append(pending)
            pending = None
        elif m := re.match(r"^~\s*(\d+)$", line):
            conv["sessions"][-1]["items"].append({"filler": int(m.group(1))})
            filler_count += int(m.group(1))
        elif line.startswith("?"):
            parts = [p.strip() for p in line[1:].split("|")]
            if len(parts) != 5:
                sys.exit(f"{where}: a question has 5 fields")
            cat, lang, q, ev, ans = parts
            conv["questions"].append({"category": cat, "lang": lang, "question": q,
                                      "keys": ev.split(), "answer": ans})
        elif m := re.match(r"^(id|lang|title):\s*(.+)$", line):
            conv[m.group(1)] = m.group(2)
        else:
            sys.exit(f"{where}: cannot read {line!r}")
    return conv


def build(conv):
    r = random.Random(conv["id"])
    seen_filler = set()
    out = {"id": conv["id"], "lang": conv["lang"], "title": conv["title"], "sessions": [],
           "questions": []}
    keys = {}
    for si, s in enumerate(conv["sessions"], 1):
        sid = f"{conv['id']}-s{si}"
        turns = []

        def add(user, assistant, key=None):
            tid = f"{sid}-t{len(turns) + 1}"
            turns.append({"id": tid, "user": user, "assistant": assistant})
            if key:
                if key in keys:
                    sys.exit(f"{conv['id']}: key {key} used twice")
                keys[key] = tid

        for item in s["items"]:
            if "filler" in item:
                for _ in range(item["filler"]):
                    for _attempt in range(200):
                        pool = r.choice(POOLS[conv["lang"]])
                        u, a = FILLERS[pool](r)
                        if u not in seen_filler:
                            break
                    seen_filler.add(u)
                    add(u, a)
            else:
                add(item["user"], item["assistant"], item["key"])
        out["sessions"].append({"id": sid, "date": s["date"], "turns": turns})
    cats = {"single", "multi", "time", "paraphrase"}
    for qi, q in enumerate(conv["questions"], 1):
        if q["category"] not in cats:
            sys.exit(f"{conv['id']} q{qi}: unknown category {q['category']}")
        missing = [k for k in q["keys"] if k not in keys]
        if missing:
            sys.exit(f"{conv['id']} q{qi}: unknown keys {missing}")
        if q["category"] == "multi" and len(set(keys[k] for k in q["keys"])) < 2:
            sys.exit(f"{conv['id']} q{qi}: a multi question needs two evidence turns")
        lang, _, cross = q["lang"].partition("+")
        item = {"id": f"{conv['id']}-q{qi}", "category": q["category"], "lang": lang,
                "question": q["question"], "evidence": [keys[k] for k in q["keys"]],
                "answer": q["answer"]}
        if cross:
            item["cross_lingual"] = True
        out["questions"].append(item)
    return out


STOP = set("""a an the i me my we our us you your it its is are was were be been am do does did
of to in on at for from with by about as and or but if so not no what which who whom whose when
where why how that this these those there here any some all can could would should will shall
may might must have has had get got kind sort much many one ones than then also just again
ever still yet into over after before up out off""".split())


def stems(text):
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = {w[:5] for w in words if w not in STOP and len(w) > 2}
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        out |= {run[i:i + 2] for i in range(len(run) - 1)}
    return out


def check(built):
    for q in built["questions"]:
        if q["category"] != "paraphrase":
            continue
        turns = {t["id"]: t for s in built["sessions"] for t in s["turns"]}
        ev = set().union(*(stems(turns[e]["user"] + " " + turns[e]["assistant"]) for e in q["evidence"]))
        shared = stems(q["question"]) & ev
        if shared:
            print(f"{q['id']}: {q['question']}  shares {sorted(shared)}")


def main():
    total_turns = total_q = 0
    for path in sorted((HERE / "src").glob("*.txt")):
        built = build(parse(path))
        (HERE / f"{built['id']}.json").write_text(
            json.dumps(built, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        turns = sum(len(s["turns"]) for s in built["sessions"])
        cats = {}
        for q in built["questions"]:
            cats[q["category"]] = cats.get(q["category"], 0) + 1
        print(f"{built['id']}: {len(built['sessions'])} sessions, {turns} turns, "
              f"{len(built['questions'])} questions {cats}")
        total_turns += turns
        total_q += len(built["questions"])
        if "--check" in sys.argv:
            check(built)
    print(f"total: {total_turns} turns, {total_q} questions")


if __name__ == "__main__":
    main()
