"""The slots of Chinese statements: the same two shapes as the English ones.

"我最喜欢的颜色是绿色", "我的生日是五月三日" (a possessed attribute), "我搬到了慕尼黑",
"我妹妹住在波尔图" (the sister's), "我在一家医院上班", "我今年34岁" (a subject and a
verb).  "我们" is the user, as "we" is in English; a person described ("我的妹妹是医生")
or a thing ("我的车是红色的") names no slot.
"""

from __future__ import annotations

import re

from shiyi.memory.lifecycle.slot_reading import StatedSlot, Subject, VerbRules, by_verb
from shiyi.memory.text.subjects import ZH_KIN

HAN = re.compile(r"[\u4e00-\u9fff]")
ZH_LEAD = re.compile(
    r"^(?:其实|对了|顺便说一下|记住|请记住|记一下|更正一下|更正|更新一下)[，,：:\s]*"
)
_ZH_NOW = r"(?:现在|目前|已经|刚|最近|如今|还|仍然|依然|仍)?"
_ZH_VERBS: VerbRules = tuple(
    (key, re.compile(pattern))
    for key, pattern in (
        ("lives in", rf"^{_ZH_NOW}(?:住在|生活在|定居在|定居于)\S"),
        ("lives in", rf"^{_ZH_NOW}(?:搬到|搬去|搬回)了?\S"),
        ("lives in", rf"^{_ZH_NOW}不(?:再)?住在\S"),
        ("works at", rf"^{_ZH_NOW}(?:不再)?在\S+?(?:工作|上班)$"),
        ("job", rf"^{_ZH_NOW}(?:的工作|的职业)是\S"),
        ("age", r"^(?:今年)?\d{1,3}岁(?:了)?$"),
        ("name", r"^叫\S"),
    )
)
# "我的X是Y": X an attribute (its last characters name one), not a person or a thing.
_ZH_POSSESSED = re.compile(
    r"^(?:我的|我们的)(?P<attribute>\S{1,10}?)(?:现在|目前|如今)?(?:是|叫|为|改成了|变成了|换成了)\s*\S"
)
_ZH_FAVOURITE = re.compile(
    r"^(?:我)?(?P<attribute>(?:最喜欢|最爱|常用|平时用)的\S{1,6}?)(?:现在|目前|如今)?(?:是|为)\s*\S"
)
_ZH_PROPERTIES = (
    "名字", "生日", "年龄", "电话", "手机号", "号码", "邮箱", "地址", "城市", "预算", "截止日期",
    "期限", "目标", "计划", "工作", "职业", "职位", "专业", "学校", "公司", "工资", "收入",
    "身高", "体重", "时区", "用户名", "密码", "颜色", "语言", "编辑器", "饮食", "血型", "星座",
)  # fmt: skip


def chinese(sentence: str) -> StatedSlot | None:
    for pattern in (_ZH_FAVOURITE, _ZH_POSSESSED):
        if (possessed := pattern.match(sentence)) is not None:
            attribute = possessed.group("attribute")
            owned = attribute.startswith(("最喜欢", "最爱", "常用", "平时用"))
            if owned or attribute.endswith(_ZH_PROPERTIES):
                return StatedSlot(attribute, said=sentence[possessed.end() - 1 :])
            return None
    return by_verb(_chinese_subject(sentence), _ZH_VERBS)


def _chinese_subject(sentence: str) -> Subject | None:
    """ "我…" or "我们…" (the user, as "we" is in English) or "我(的)妹妹…" (the sister), and
    the words after; "我们公司…" (our company) is no one."""
    for kin in ZH_KIN:
        for lead in (f"我的{kin}", f"我{kin}"):
            if sentence.startswith(lead):
                return (kin,), sentence[len(lead) :]
    if sentence.startswith("我们"):
        rest = sentence[2:]
        return None if rest.startswith(_OURS_NOT_MINE) else ((), rest)
    if sentence.startswith("我"):
        return (), sentence[1:]
    return None


# "我们公司", "我们学校": a place "we" belong to, not the user.
_OURS_NOT_MINE = ("公司", "学校", "团队", "部门", "单位", "组", "家公司")
