(define (domain basic-domain)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types item container receptacle)
  (:constants fridge - container egg - item)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (in ?i - item ?c - container)
    (on ?i - item ?r - receptacle)
    (fridge_open ?c - container)
  )
  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))))
  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))))
  (:action open_door
    :parameters (?c - container)
    :precondition (and (not (fridge_open ?c)) (not (in egg ?c)))
    :effect (fridge_open ?c))
  (:action close_door
    :parameters (?c - container)
    :precondition (fridge_open ?c)
    :effect (not (fridge_open ?c)))
  (:action put_in
    :parameters (?i - item ?c - container)
    :precondition (and (fridge_open ?c) (holding ?i))
    :effect (and (in ?i ?c) (hands_free) (not (holding ?i))))
)
