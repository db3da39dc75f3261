//! The benchmark's material in Chinese: the same brief as [`super::scenario`] (a rule stated
//! once, later tasks of its kind worded differently, tasks no rule is about), written for a
//! user who speaks Chinese. Markers stay ASCII or short Chinese phrases no task contains.

use super::scenario::{Kind, Rule, correction, stated};

pub const RULES: &[Rule] = &[
    stated(
        Kind::Format,
        "以后所有时间都写成 ISO 8601 格式，带 +08:00 时区。",
        "+08:00",
        &[
            "记一下今天上午九点开始的站会。",
            "帮我写一条日志：发布会下午三点半结束。",
            "明早八点的航班，帮我记进行程。",
            "周五晚上七点聚餐，帮我加到日程里。",
        ],
    ),
    correction(
        Kind::Format,
        "明天北京天气怎么样？",
        "以后温度一律用摄氏度，不要用华氏度。",
        "摄氏度",
        &[
            "周末上海会不会很热？",
            "下周去哈尔滨要带多厚的衣服？",
            "广州今晚适合跑步吗？",
            "成都后天下雨吗，冷不冷？",
        ],
    ),
    stated(
        Kind::Format,
        "以后金额都写成 12.50 CNY 这种格式，币种放在数字后面。",
        "12.50 CNY",
        &[
            "上个月打车一共花了多少钱？",
            "这三张发票加起来是多少？",
            "团建预算还剩多少？",
            "帮我算一下房租和水电一共多少。",
        ],
    ),
    stated(
        Kind::Format,
        "以后比较几个方案时，总是用 Markdown 表格列出来。",
        "Markdown 表格",
        &[
            "小米和华为的手机哪个更适合我？",
            "租房和买房，各有什么利弊？",
            "三家云服务商帮我对比一下。",
            "Python 和 Go 做后端哪个好？",
        ],
    ),
    stated(
        Kind::Naming,
        "以后新建的文件一律用小写加连字符命名，例如 weekly-report.md。",
        "weekly-report.md",
        &[
            "帮我起个名字存这份周报。",
            "会议纪要保存成什么文件名好？",
            "新建一个放部署脚本的文件。",
            "这份季度总结该叫什么？",
        ],
    ),
    correction(
        Kind::Workflow,
        "把登录模块的修改提交一下。",
        "以后提交信息一律用英文，并以 feat: 或 fix: 开头。",
        "feat:",
        &[
            "把刚才改的缓存逻辑提交了吧。",
            "搜索功能修好了，帮我提交。",
            "把配置文件的调整提交上去。",
            "新加的导出按钮可以提交了。",
        ],
    ),
    stated(
        Kind::Workflow,
        "以后删除任何东西之前，务必先备份到 ~/backup 目录。",
        "~/backup",
        &[
            "把 /tmp 下的旧日志清掉。",
            "清理一下已经合并的分支。",
            "把测试环境的旧数据库删了。",
            "删除下载目录里一周前的文件。",
        ],
    ),
    stated(
        Kind::Tone,
        "以后给客户写邮件，总是以「您好」开头，以「顺颂商祺」结尾。",
        "顺颂商祺",
        &[
            "给客户发封邮件说明价格调整。",
            "告诉客户合同已经寄出。",
            "写信给客户，把周五的会改到下周。",
            "提醒客户还有一笔款没付。",
        ],
    ),
    stated(
        Kind::Language,
        "以后代码注释一律用英文写，不要用中文。",
        "用英文写",
        &[
            "给这个排序函数加上注释。",
            "把缓存淘汰那段代码注释一下。",
            "在这个正则上面加一行说明。",
            "部署脚本每一步都写个注释。",
        ],
    ),
    stated(
        Kind::Tool,
        "以后安装 Python 包一律用 uv pip install，不要用 pip。",
        "uv pip install",
        &[
            "帮我在项目里装上 pandas。",
            "配置一下 pytest 好跑测试。",
            "环境里需要 httpx 这个库。",
            "给笔记本装上 numpy 和 scipy。",
        ],
    ),
];

/// Tasks no rule is about.
pub const UNRELATED: &[&str] = &[
    "给我的新猫起个名字。",
    "红烧肉怎么做才好吃？",
    "解释一下光合作用。",
    "推荐三本科幻小说。",
    "澳大利亚的首都是哪里？",
    "给我一套二十分钟的徒手训练。",
    "讲讲《红楼梦》的主要情节。",
    "疫苗是怎么训练免疫系统的？",
    "写一首关于秋叶的短诗。",
    "病毒和细菌有什么区别？",
    "门的合页吱吱响怎么办？",
    "给十岁的孩子解释递归。",
    "极光是怎么形成的？",
    "六个人适合玩什么桌游？",
    "天空为什么是蓝色的？",
    "面试有什么技巧？",
    "复利是怎么回事？",
    "推荐一个讲历史的播客。",
    "素食晚宴做什么菜好？",
    "解释一下足球的越位规则。",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_its_marker_and_no_task_holds_one() {
        assert!(RULES.len() >= 10);
        assert!(UNRELATED.len() >= 20);
        for r in RULES {
            assert!(r.tasks.len() >= 4, "{}", r.statement);
            assert!(r.statement.contains(r.marker), "{}", r.statement);
        }
        let tasks = RULES
            .iter()
            .flat_map(|r| r.tasks.iter().chain(r.corrects.iter()))
            .chain(UNRELATED);
        for t in tasks {
            for r in RULES {
                assert!(!t.contains(r.marker), "{t:?} holds {:?}", r.marker);
            }
        }
    }
}
