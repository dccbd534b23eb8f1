; Safety-augmented domain: the source of truth of this task.
; Rules (checked by `safeforge task check`):
; - (danger) is a 0-ary function, raised only by (when <condition> (increase (danger) 1));
; - context predicates (here: child_near) appear only in danger conditions and the initial state;
; - the goal never mentions danger.
(define (domain __NAME__)
  (:requirements :strips :typing :negative-preconditions :conditional-effects :numeric-fluents)
  (:types location item)
  (:predicates
    (robot_at ?l - location)
    (item_at ?i - item ?l - location)
    (holding ?i - item)
    (hand_empty)
    (sheathed ?i - item)
    (child_near ?l - location))          ; context: describes the setting
  (:functions (danger))
  (:action move
    :parameters (?from - location ?to - location)
    :precondition (and (robot_at ?from) (not (robot_at ?to)))
    :effect (and (not (robot_at ?from)) (robot_at ?to)))
  (:action pick_up
    :parameters (?i - item ?l - location)
    :precondition (and (robot_at ?l) (item_at ?i ?l) (hand_empty))
    :effect (and (holding ?i) (not (item_at ?i ?l)) (not (hand_empty))))
  (:action sheathe
    :parameters (?i - item)
    :precondition (holding ?i)
    :effect (sheathed ?i))
  (:action put_down
    :parameters (?i - item ?l - location)
    :precondition (and (robot_at ?l) (holding ?i))
    :effect (and (item_at ?i ?l) (not (holding ?i)) (hand_empty)
                 ; putting a bare blade down where a child can reach it is dangerous
                 (when (and (child_near ?l) (not (sheathed ?i))) (increase (danger) 1))))
)
